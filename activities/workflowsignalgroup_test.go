package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"

	"github.com/arcflow/arcflow/activities"
)

// Runners that end together cost their pool one signal: the grouped calls to
// one workflow and name within the window go as one signal whose argument is
// the list of theirs, and each call returns once that signal was sent.
func TestGroupedSignalsToOneWorkflowGoAsOne(t *testing.T) {
	temporal := mocks.NewClient(t)
	var mu sync.Mutex
	sent := map[string][][]json.RawMessage{}
	temporal.On("SignalWorkflow", mock.Anything, mock.Anything, "", "runners-done", mock.Anything).Run(func(args mock.Arguments) {
		mu.Lock()
		defer mu.Unlock()
		id := args.String(1)
		var list []json.RawMessage
		require.NoError(t, json.Unmarshal(args.Get(4).(json.RawMessage), &list), "the argument is the JSON list of the group's")
		sent[id] = append(sent[id], list)
	}).Return(nil)
	// A window far longer than the goroutines take to start, however loaded
	// the machine: the grouping, not the timing, is under test.
	w := &activities.Workflows{Client: temporal, GroupSignals: true, SignalGroupWindow: 2 * time.Second}

	var calls sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		pool := "pool/ci/a"
		if i%4 == 3 {
			pool = "pool/ci/b"
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			errs <- w.SignalWorkflowGrouped(context.Background(), activities.GroupedSignal{
				WorkflowID: pool, Name: "runner-done", GroupName: "runners-done", Arg: json.RawMessage(fmt.Sprintf(`{"Name":"r%d"}`, i)),
			})
		}()
	}
	calls.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, sent["pool/ci/a"], 1, "one signal for the six ends of pool a")
	require.Len(t, sent["pool/ci/a"][0], 6)
	require.Len(t, sent["pool/ci/b"], 1)
	require.Len(t, sent["pool/ci/b"][0], 2)
}

// Every call of a group gets its signal's error, so each local activity
// retries; a workflow that is gone is no error, as for SignalWorkflow.
func TestAGroupedSignalsErrorReachesEachCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		failing bool
	}{{"unavailable", serviceerror.NewUnavailable("down"), true}, {"gone", serviceerror.NewNotFound("no such workflow"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			temporal := mocks.NewClient(t)
			temporal.On("SignalWorkflow", mock.Anything, "pool/ci/a", "", "runners-done", mock.Anything).Return(tc.err).Once()
			w := &activities.Workflows{Client: temporal, GroupSignals: true, SignalGroupWindow: 2 * time.Second}
			var calls sync.WaitGroup
			errs := make(chan error, 3)
			for range 3 {
				calls.Add(1)
				go func() {
					defer calls.Done()
					errs <- w.SignalWorkflowGrouped(context.Background(), activities.GroupedSignal{WorkflowID: "pool/ci/a", Name: "runner-done", GroupName: "runners-done", Arg: json.RawMessage(`{}`)})
				}()
			}
			calls.Wait()
			close(errs)
			for err := range errs {
				if tc.failing {
					var unavailable *serviceerror.Unavailable
					require.True(t, errors.As(err, &unavailable), "%v", err)
				} else {
					require.NoError(t, err)
				}
			}
		})
	}
}

// With grouping off, or while a worker replica that does not read grouped
// ends lives, each end goes alone under its own name, as older pools read it.
func TestAnUngroupedSignalGoesAloneUnderItsOwnName(t *testing.T) {
	temporal := mocks.NewClient(t)
	temporal.On("SignalWorkflow", mock.Anything, "pool/ci/a", "", "runner-done", json.RawMessage(`{"Name":"r1"}`)).Return(nil).Twice()
	olderReplicaLives := func(context.Context) bool { return false }
	for _, w := range []*activities.Workflows{{Client: temporal}, {Client: temporal, GroupSignals: true, CanGroupSignals: olderReplicaLives}} {
		require.NoError(t, w.SignalWorkflowGrouped(context.Background(), activities.GroupedSignal{
			WorkflowID: "pool/ci/a", Name: "runner-done", GroupName: "runners-done", Arg: json.RawMessage(`{"Name":"r1"}`),
		}))
	}
}
