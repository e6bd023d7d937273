package world

import (
	"math"
	"slices"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// The events below are built by hand, one history per case, in the order the
// server writes them.

func ev(t enumspb.EventType) *historypb.HistoryEvent { return &historypb.HistoryEvent{EventType: t} }

func started() *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{}}}
}

func startedAsChild() *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
				ParentWorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "pool/x", RunId: "r"}}}}
}

func startedByContinueAsNew() *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
		Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{ContinuedExecutionRunId: "previous"}}}
}

func activityStarted(attempt int32) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
		Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{
			ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{Attempt: attempt}}}
}

func taskCompleted(localRetries uint32) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
		Attributes: &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{
			WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{
				MeteringMetadata: &commonpb.MeteringMetadata{NonfirstLocalActivityExecutionAttempts: localRetries}}}}
}

func marker(task int64) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_MARKER_RECORDED,
		Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{
			MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{MarkerName: "SideEffect", WorkflowTaskCompletedEventId: task}}}
}

func upsert(names ...string) *historypb.HistoryEvent {
	fields := map[string]*commonpb.Payload{}
	for _, n := range names {
		fields[n] = &commonpb.Payload{Data: []byte(`"v"`)}
	}
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
		Attributes: &historypb.HistoryEvent_UpsertWorkflowSearchAttributesEventAttributes{
			UpsertWorkflowSearchAttributesEventAttributes: &historypb.UpsertWorkflowSearchAttributesEventAttributes{
				SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}}}}
}

func taskFailed(cause enumspb.WorkflowTaskFailedCause) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED,
		Attributes: &historypb.HistoryEvent_WorkflowTaskFailedEventAttributes{
			WorkflowTaskFailedEventAttributes: &historypb.WorkflowTaskFailedEventAttributes{Cause: cause}}}
}

// workflowTask is the scheduled/started/completed triple of one workflow task.
func workflowTask() []*historypb.HistoryEvent {
	return []*historypb.HistoryEvent{
		ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted(0),
	}
}

func history(parts ...any) []*historypb.HistoryEvent {
	var out []*historypb.HistoryEvent
	for _, p := range parts {
		switch p := p.(type) {
		case *historypb.HistoryEvent:
			out = append(out, p)
		case []*historypb.HistoryEvent:
			out = append(out, p...)
		}
	}
	return out
}

func TestCountActions(t *testing.T) {
	signaled := ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
	tests := []struct {
		name   string
		events []*historypb.HistoryEvent
		want   Actions
		total  int
	}{
		{"empty history", nil, Actions{}, 0},
		{"client start, one task, completed", history(started(), workflowTask(), ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)),
			Actions{WorkflowStarts: 1}, 1},
		{"signal-with-start that started the workflow is one action", history(started(), signaled, workflowTask()),
			Actions{WorkflowStarts: 1}, 1},
		{"signal-with-start, then a later signal", history(started(), signaled, workflowTask(), signaled, workflowTask()),
			Actions{WorkflowStarts: 1, Signals: 1}, 2},
		{"client start, then a signal after the first task was scheduled",
			history(started(), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), signaled, ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted(0)),
			Actions{WorkflowStarts: 1, Signals: 1}, 2},
		{"signals to an existing workflow each count (part of a history)", history(signaled, signaled, workflowTask(), signaled),
			Actions{Signals: 3}, 3},
		{"a child's start: its own start action", history(startedAsChild(), workflowTask()), Actions{WorkflowStarts: 1}, 1},
		{"a child that opens with a signal: the signal counts", history(startedAsChild(), signaled, workflowTask()),
			Actions{WorkflowStarts: 1, Signals: 1}, 2},
		{"continue-as-new: the new run's start counts, not ContinuedAsNew",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW), startedByContinueAsNew(), workflowTask()),
			Actions{WorkflowStarts: 1}, 1},
		{"start child intent; the child's started event is not in the parent",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED), ev(enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED)),
			Actions{ChildStartIntents: 1}, 1},
		{"signal external: billed on the signaled side only",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED), ev(enumspb.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED)),
			Actions{}, 0},
		{"activity succeeding first time",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), activityStarted(1), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)),
			Actions{Activities: 1}, 1},
		{"activity that succeeded on its fourth attempt: three retries",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), activityStarted(4), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)),
			Actions{Activities: 1, ActivityRetries: 3}, 4},
		{"activity still scheduled (no Started yet)", history(workflowTask(), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)),
			Actions{Activities: 1}, 1},
		{"markers of one workflow task are one action; another task's are another",
			history(ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted(0), marker(3), marker(3), marker(3),
				ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted(0), marker(9)),
			Actions{MarkerTasks: 2}, 2},
		{"local activity retries from the task's metering metadata",
			history(ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED), taskCompleted(2), marker(3)),
			Actions{MarkerTasks: 1, LocalActivityRetries: 2}, 3},
		{"timers started count; fired and canceled do not",
			history(ev(enumspb.EVENT_TYPE_TIMER_STARTED), ev(enumspb.EVENT_TYPE_TIMER_FIRED), ev(enumspb.EVENT_TYPE_TIMER_STARTED), ev(enumspb.EVENT_TYPE_TIMER_CANCELED)),
			Actions{Timers: 2}, 2},
		{"one upsert of several attributes is one action", history(upsert("ArcflowRunnerState", "ArcflowPool")), Actions{SearchAttrUpserts: 1}, 1},
		{"an upsert of TemporalChangeVersion alone is free", history(upsert("TemporalChangeVersion")), Actions{}, 0},
		{"an upsert of TemporalChangeVersion with another attribute counts", history(upsert("TemporalChangeVersion", "ArcflowPool")),
			Actions{SearchAttrUpserts: 1}, 1},
		{"update accepted counts, completed does not",
			history(ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED)),
			Actions{Updates: 1}, 1},
		{"options updated", history(ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED)), Actions{OptionsUpdates: 1}, 1},
		{"reset counts; other task failures do not",
			history(taskFailed(enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW), taskFailed(enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE)),
			Actions{Resets: 1}, 1},
		{"nexus operation scheduled and cancel requested",
			history(ev(enumspb.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED), ev(enumspb.EVENT_TYPE_NEXUS_OPERATION_COMPLETED), ev(enumspb.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED)),
			Actions{NexusOperations: 2}, 2},
		{"workflow tasks, completion, timeouts and terminations are free",
			history(workflowTask(), ev(enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT), ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED)),
			Actions{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CountActions(tt.events)
			if got != tt.want {
				t.Errorf("CountActions = %+v, want %+v", got, tt.want)
			}
			if got.Total() != tt.total {
				t.Errorf("Total = %d, want %d", got.Total(), tt.total)
			}
		})
	}
}

// A runner's life as arcflow writes it: started as the pool's child, a search
// attribute upsert per phase, activities, a timer, a signal to its pool.
func TestCountActionsRunnerLife(t *testing.T) {
	events := history(startedAsChild(), workflowTask(), upsert("ArcflowRunnerState"),
		ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), activityStarted(1), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED), workflowTask(),
		ev(enumspb.EVENT_TYPE_TIMER_STARTED), ev(enumspb.EVENT_TYPE_TIMER_FIRED), workflowTask(),
		ev(enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED), ev(enumspb.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED),
		ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), activityStarted(2), ev(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED), workflowTask(),
		ev(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED))
	got := CountActions(events)
	want := Actions{WorkflowStarts: 1, SearchAttrUpserts: 1, Activities: 2, ActivityRetries: 1, Timers: 1}
	if got != want || got.Total() != 6 {
		t.Fatalf("CountActions = %+v (total %d), want %+v (total 6)", got, got.Total(), want)
	}
	if s := got.PerUnit(2); s != "0.50 workflow starts, 1.00 activities, 0.50 activity retries, 0.50 timers, 0.50 search attribute upserts" {
		t.Errorf("PerUnit(2) = %q", s)
	}
}

func TestActionsPlus(t *testing.T) {
	a := Actions{WorkflowStarts: 1, Signals: 2, Timers: 3, NexusOperations: 1}
	b := Actions{Signals: 5, MarkerTasks: 1, Resets: 2, NexusOperations: 1}
	got := a.Plus(b)
	want := Actions{WorkflowStarts: 1, Signals: 7, Timers: 3, MarkerTasks: 1, Resets: 2, NexusOperations: 2}
	if got != want || got.Total() != a.Total()+b.Total() {
		t.Fatalf("Plus = %+v, want %+v", got, want)
	}
}

func TestCloudPriceUSD(t *testing.T) {
	// 20 Actions per job for 1,000 jobs: 20,000 Actions at $50 per million is $1.
	if got := CloudPriceUSD(20 * 1000); math.Abs(got-1.0) > 1e-9 {
		t.Fatalf("CloudPriceUSD(20000) = %v, want 1.0", got)
	}
}

func TestRunsStartedBy(t *testing.T) {
	events := history(started(), workflowTask(),
		ev(enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),
		&historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
			Attributes: &historypb.HistoryEvent_ChildWorkflowExecutionStartedEventAttributes{
				ChildWorkflowExecutionStartedEventAttributes: &historypb.ChildWorkflowExecutionStartedEventAttributes{
					WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: "runner/ns/a", RunId: "ra"}}}},
		ev(enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED), ev(enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED),
		&historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionContinuedAsNewEventAttributes{
				WorkflowExecutionContinuedAsNewEventAttributes: &historypb.WorkflowExecutionContinuedAsNewEventAttributes{NewExecutionRunId: "next"}}})
	got := runsStartedBy("pool/ns/rd/x", events)
	want := []runRef{{"runner/ns/a", "ra"}, {"pool/ns/rd/x", "next"}}
	if !slices.Equal(got, want) {
		t.Fatalf("runsStartedBy = %v, want %v", got, want)
	}
}
