package world

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Step is one stage of the path from a webhook to a Running runner pod, with
// the time each job spent in it.
type Step struct {
	Name string
	Took Percentiles
}

// Milestones are when each stage of a burst's critical path was reached, one
// time per new runner. Runners are not tied to jobs (GitHub gives any job to any
// runner), so the k-th time of each stage is paired with the k-th of the next.
type Milestones struct {
	Accepted          []time.Time // the webhook's 202 for a queued delivery
	Decided           []time.Time // the autoscaler sent a scale signal counting this runner
	PoolSignalled     []time.Time // the pool's history has that signal
	RunnerRequested   []time.Time // the pool asked for the runner's workflow to start
	RunnerStarted     []time.Time // the runner workflow's first event
	PodCreateStarted  []time.Time // a worker started the runner's pod create (see podCreateStarted)
	PodCreated, Ready []time.Time // from the pod watch
	// CreatedByStart: the runners' pods were created by their starts, before
	// their workflows (RunnerInput.Created), so neither a workflow's start
	// nor its first call is on the path to the pod.
	CreatedByStart bool
}

// Steps pairs the milestones by rank and measures each stage.
func (m Milestones) Steps() []Step {
	type stage struct {
		name string
		at   []time.Time
	}
	stages := []stage{
		{"webhook accepted", m.Accepted}, {"autoscaler decided", m.Decided}, {"pool signalled", m.PoolSignalled},
		{"runner workflow requested", m.RunnerRequested}, {"runner workflow started", m.RunnerStarted},
		{"pod create started", m.PodCreateStarted}, {"pod created", m.PodCreated}, {"pod Running", m.Ready},
	}
	if m.CreatedByStart {
		stages = slices.DeleteFunc(stages, func(s stage) bool {
			return s.name == "runner workflow started" || s.name == "pod create started"
		})
	}
	var steps []Step
	for i := 1; i < len(stages); i++ {
		from, to := sorted(stages[i-1].at), sorted(stages[i].at)
		var took []time.Duration
		for k := range min(len(from), len(to)) {
			took = append(took, to[k].Sub(from[k]))
		}
		steps = append(steps, Step{Name: stages[i-1].name + " → " + stages[i].name, Took: PercentilesOf(took)})
	}
	return steps
}

func sorted(ts []time.Time) []time.Time {
	out := append([]time.Time(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// ReadMilestones reads the Temporal side of a burst's milestones from the
// histories of the autoscaler, the pool (every run since start) and the runners
// of a namespace. Scale signals count new runners from zero: the bench starts
// each burst with an empty pool.
func ReadMilestones(ctx context.Context, tc client.Client, autoscalerID, poolID, namespace string, start time.Time) (Milestones, error) {
	var m Milestones
	dc := converter.GetDefaultDataConverter()
	scaleTimes := func(events []*historypb.HistoryEvent, into *[]time.Time) error {
		given := 0
		for _, e := range events {
			var input *commonpb.Payloads
			switch {
			case e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes().GetSignalName() == contract.SignalScale:
				input = e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes().GetInput()
			case e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == contract.SignalScale:
				input = e.GetWorkflowExecutionSignaledEventAttributes().GetInput()
			default:
				continue
			}
			var req workflows.ScaleRequest
			if err := dc.FromPayloads(input, &req); err != nil {
				return fmt.Errorf("decode a scale signal: %w", err)
			}
			for n := req.Demanded(); given < n; given++ {
				*into = append(*into, e.GetEventTime().AsTime())
			}
		}
		return nil
	}
	auto, err := runsSince(ctx, tc, autoscalerID, start)
	if err != nil {
		return m, err
	}
	if err := scaleTimes(auto, &m.Decided); err != nil {
		return m, err
	}
	pool, err := runsSince(ctx, tc, poolID, start)
	if err != nil {
		return m, err
	}
	if err := scaleTimes(pool, &m.PoolSignalled); err != nil {
		return m, err
	}
	for _, e := range pool {
		if e.GetEventType() == enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
			m.RunnerRequested = append(m.RunnerRequested, e.GetEventTime().AsTime())
		}
		// Since runner-starts-activity, one activity starts a decision's runners.
		if attrs := e.GetActivityTaskScheduledEventAttributes(); attrs.GetActivityType().GetName() == "StartWorkflows" {
			var starts []activities.WorkflowStart
			if err := dc.FromPayloads(attrs.GetInput(), &starts); err != nil {
				return m, fmt.Errorf("decode a StartWorkflows input: %w", err)
			}
			for range starts {
				m.RunnerRequested = append(m.RunnerRequested, e.GetEventTime().AsTime())
			}
		}
	}
	runners, err := listRuns(ctx, tc, fmt.Sprintf("WorkflowType = 'RunnerWorkflow' AND WorkflowId STARTS_WITH 'runner/%s/' AND StartTime >= '%s'", namespace, start.UTC().Format(time.RFC3339Nano)))
	if err != nil {
		return m, err
	}
	for _, id := range runners {
		events, err := History(ctx, tc, id.id, id.run)
		if err != nil {
			return m, err
		}
		if len(events) > 0 && events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId() == "" {
			m.RunnerStarted = append(m.RunnerStarted, events[0].GetEventTime().AsTime())
			var in workflows.RunnerInput
			if err := dc.FromPayloads(events[0].GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil {
				return m, fmt.Errorf("decode a runner's input: %w", err)
			}
			m.CreatedByStart = m.CreatedByStart || in.Created != nil
		}
		if at, ok := podCreateStarted(events); ok {
			m.PodCreateStarted = append(m.PodCreateStarted, at)
		}
	}
	return m, nil
}

// podCreateStarted is when a worker began a runner's first call, which creates
// its pod: the activity task's start, or, for a local activity (a runner of
// RunnerRevisionLocal), the start of the workflow task that ran it.
func podCreateStarted(events []*historypb.HistoryEvent) (time.Time, bool) {
	var taskStarted time.Time
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			taskStarted = e.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			return e.GetEventTime().AsTime(), true
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == localActivityMarker {
				return taskStarted, !taskStarted.IsZero()
			}
		}
	}
	return time.Time{}, false
}

// localActivityMarker is the marker name the Go SDK records a local activity's
// result under.
const localActivityMarker = "LocalActivity"

// runsSince returns the events since start of every run of a workflow ID that
// was open at start or began after it, oldest run first.
func runsSince(ctx context.Context, tc client.Client, workflowID string, start time.Time) ([]*historypb.HistoryEvent, error) {
	runs, err := listRuns(ctx, tc, fmt.Sprintf("WorkflowId = '%s' AND (ExecutionStatus = 'Running' OR CloseTime >= '%s')", workflowID, start.UTC().Format(time.RFC3339Nano)))
	if err != nil {
		return nil, err
	}
	var events []*historypb.HistoryEvent
	for i := len(runs) - 1; i >= 0; i-- { // visibility lists the newest first
		run, err := History(ctx, tc, workflowID, runs[i].run)
		if err != nil {
			return nil, err
		}
		for _, e := range run {
			if !e.GetEventTime().AsTime().Before(start) {
				events = append(events, e)
			}
		}
	}
	return events, nil
}
