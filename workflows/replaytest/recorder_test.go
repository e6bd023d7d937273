package replaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// historiesDir is where the replay test of package workflows reads histories.
const historiesDir = "../testdata/histories"

// maxHistoryBytes keeps each checked-in history small.
const maxHistoryBytes = 200 << 10

// recorder drives one scenario's workflows on one server and exports their
// histories into a temporary directory, each file named after the scenario.
type recorder struct {
	t        *testing.T
	ctx      context.Context
	c        client.Client
	scenario string
	dir      string
	// files are the exported histories, in export order.
	files []string
}

// newRecorder also marks the test parallel: scenarios mostly wait on timers, and
// their workflow IDs and fake runner names are their own.
func newRecorder(t *testing.T, s *server, scenario string) *recorder {
	needServers(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &recorder{t: t, ctx: ctx, c: s.client, scenario: scenario, dir: t.TempDir()}
}

// start starts a workflow and returns its first run ID.
func (r *recorder) start(id string, wf, input any) string {
	r.t.Helper()
	run, err := r.c.ExecuteWorkflow(r.ctx, client.StartWorkflowOptions{ID: id, TaskQueue: contract.TaskQueue}, wf, input)
	require.NoError(r.t, err, "start %s", id)
	return run.GetRunID()
}

func (r *recorder) signal(id, name string, arg any) {
	r.t.Helper()
	require.NoError(r.t, r.c.SignalWorkflow(r.ctx, id, "", name, arg), "signal %s to %s", name, id)
}

// poll calls check until it reports true, failing the test after the deadline
// with what the last check saw.
func (r *recorder) poll(what string, check func() (bool, string)) {
	r.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(r.ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		ok, seen := check()
		last = seen
		return ok, nil
	})
	require.NoError(r.t, err, "waiting for %s; last seen: %s", what, last)
}

// waitState polls a workflow's state query until done accepts the state.
func waitState[S any](r *recorder, id, what string, done func(S) bool) S {
	r.t.Helper()
	var state S
	r.poll(id+": "+what, func() (bool, string) {
		var s S
		v, err := r.c.QueryWorkflow(r.ctx, id, "", contract.QueryState)
		if err == nil {
			err = v.Get(&s)
		}
		if err != nil {
			return false, err.Error() // not started yet, or between runs
		}
		state = s
		seen, _ := json.Marshal(s)
		return done(s), string(seen)
	})
	return state
}

// waitDone waits for a workflow to complete, following continue-as-new, and
// decodes its result into out (nil: no result).
func (r *recorder) waitDone(id string, out any) {
	r.t.Helper()
	if err := r.c.GetWorkflow(r.ctx, id, "").Get(r.ctx, out); err != nil {
		r.t.Fatalf("%s did not complete: %v; %s", id, err, r.describe(id))
	}
}

// describe says where a workflow is, for a failure message.
func (r *recorder) describe(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var state json.RawMessage
	if v, err := r.c.QueryWorkflow(ctx, id, "", contract.QueryState); err != nil {
		state = json.RawMessage(strconv.Quote(err.Error()))
	} else if err := v.Get(&state); err != nil {
		state = json.RawMessage(strconv.Quote(err.Error()))
	}
	desc, err := r.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Sprintf("state %s; describe: %v", state, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	return fmt.Sprintf("state %s; status %s, %d events, %d pending activities",
		state, info.GetStatus(), info.GetHistoryLength(), len(desc.GetPendingActivities()))
}

// waitContinued waits until a workflow's current run is not firstRun any more.
func (r *recorder) waitContinued(id, firstRun string) {
	r.t.Helper()
	r.poll(id+" to continue as new", func() (bool, string) {
		run, err := r.currentRun(id)
		if err != nil {
			return false, err.Error()
		}
		return run != firstRun, "run " + run
	})
}

// continued reports whether a workflow runs past its first run now.
func (r *recorder) continued(id, firstRun string) bool {
	r.t.Helper()
	run, err := r.currentRun(id)
	require.NoError(r.t, err)
	return run != firstRun
}

func (r *recorder) currentRun(id string) (string, error) {
	desc, err := r.c.DescribeWorkflowExecution(r.ctx, id, "")
	if err != nil {
		return "", fmt.Errorf("describe %s: %w", id, err)
	}
	return desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), nil
}

// child is a workflow another one started.
type child struct{ id, runID string }

// export writes every run of a closed workflow, from firstRun along its
// continue-as-new chain, as <scenario><role>.json, or <scenario><role>-run1.json,
// -run2.json, ... It returns the children the runs started, in start order.
func (r *recorder) export(role, id, firstRun string) []child {
	r.t.Helper()
	var runs [][]*historypb.HistoryEvent
	var children []child
	for run := firstRun; run != ""; {
		events := r.history(id, run)
		runs = append(runs, events)
		run = ""
		for _, ev := range events {
			if started := ev.GetChildWorkflowExecutionStartedEventAttributes(); started != nil {
				children = append(children, child{started.GetWorkflowExecution().GetWorkflowId(), started.GetWorkflowExecution().GetRunId()})
			}
			children = append(children, r.startedByActivity(ev)...)
			if cont := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); cont != nil {
				run = cont.GetNewExecutionRunId()
			}
		}
	}
	for i, events := range runs {
		file := r.scenario + role + ".json"
		if len(runs) > 1 {
			file = fmt.Sprintf("%s%s-run%d.json", r.scenario, role, i+1)
		}
		r.write(file, events)
	}
	return children
}

// startedByActivity names the workflows a StartWorkflows activity was asked to
// start (a pool's runners since runner-starts-activity); their run IDs are
// found later, from the visibility store.
func (r *recorder) startedByActivity(ev *historypb.HistoryEvent) []child {
	attrs := ev.GetActivityTaskScheduledEventAttributes()
	if attrs.GetActivityType().GetName() != "StartWorkflows" {
		return nil
	}
	var starts []activities.WorkflowStart
	require.NoError(r.t, converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &starts))
	var out []child
	for _, s := range starts {
		out = append(out, child{id: s.ID})
	}
	return out
}

// firstRun is the earliest run of a workflow ID.
func (r *recorder) firstRun(id string) string {
	var first string
	r.poll("the runs of "+id, func() (bool, string) {
		resp, err := r.c.ListWorkflow(r.ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id)})
		if err != nil || len(resp.GetExecutions()) == 0 {
			return false, fmt.Sprint(err)
		}
		earliest := resp.GetExecutions()[0]
		for _, e := range resp.GetExecutions() {
			if e.GetStartTime().AsTime().Before(earliest.GetStartTime().AsTime()) {
				earliest = e
			}
		}
		first = earliest.GetExecution().GetRunId()
		return true, first
	})
	return first
}

// exportChildren exports each child, once it completed, with the role
// -runner1, -runner2, ...
func (r *recorder) exportChildren(children []child) {
	r.t.Helper()
	for i, ch := range children {
		if ch.runID == "" {
			ch.runID = r.firstRun(ch.id)
		}
		require.NoError(r.t, r.c.GetWorkflow(r.ctx, ch.id, ch.runID).Get(r.ctx, nil), "child %s did not complete", ch.id)
		r.export(fmt.Sprintf("-runner%d", i+1), ch.id, ch.runID)
	}
}

func (r *recorder) history(id, runID string) []*historypb.HistoryEvent {
	r.t.Helper()
	iter := r.c.GetWorkflowHistory(r.ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(r.t, err, "history of %s run %s", id, runID)
		events = append(events, ev)
	}
	return events
}

func (r *recorder) write(file string, events []*historypb.HistoryEvent) {
	r.t.Helper()
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(r.t, err)
	require.Less(r.t, len(data), maxHistoryBytes, "%s: a history this large makes a poor test; shorten the scenario", file)
	path := filepath.Join(r.dir, file)
	require.NoError(r.t, os.WriteFile(path, append(data, '\n'), 0o644))
	r.files = append(r.files, path)
}

// finish replays every exported history against this binary's workflow code and,
// with -record, checks the scenario in unless it is checked in already.
func (r *recorder) finish() {
	r.t.Helper()
	require.NotEmpty(r.t, r.files, "the scenario exported nothing")
	for _, path := range r.files {
		info, err := ReadHistoryInfo(path)
		require.NoError(r.t, err)
		require.True(r.t, info.Closed, "%s: the run did not complete", filepath.Base(path))
		require.NoError(r.t, ReplayFile(path))
		r.t.Logf("%s: %s, %d events", filepath.Base(path), info.WorkflowType, info.Events)
	}
	if *record {
		r.keep()
	}
}

// keep copies the scenario's histories into historiesDir, unless some are there:
// old histories stand for workflows already running and are never replaced.
func (r *recorder) keep() {
	r.t.Helper()
	var old []string
	for _, pattern := range []string{r.scenario + ".json", r.scenario + "-*.json"} {
		matches, err := filepath.Glob(filepath.Join(historiesDir, pattern))
		require.NoError(r.t, err)
		old = append(old, matches...)
	}
	if len(old) > 0 {
		r.t.Logf("%s is checked in already (%d files); kept as it is", r.scenario, len(old))
		return
	}
	require.NoError(r.t, os.MkdirAll(historiesDir, 0o755))
	for _, path := range r.files {
		data, err := os.ReadFile(path)
		require.NoError(r.t, err)
		dest := filepath.Join(historiesDir, filepath.Base(path))
		require.NoError(r.t, os.WriteFile(dest, data, 0o644))
		r.t.Logf("recorded %s", dest)
	}
}
