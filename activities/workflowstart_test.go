package activities_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/mocks"

	"github.com/arcflow/arcflow/activities"
)

// An activity cancelled while its start calls are in flight (a heartbeat the
// server did not answer in time) lets those calls finish, since the server
// may have handed their workflows' first tasks to this worker, and starts no
// more: its retry starts the rest.
func TestStartWorkflowsFinishesTheCallsInFlightWhenCancelled(t *testing.T) {
	temporal := mocks.NewClient(t)
	release := make(chan struct{})
	inFlight := make(chan context.Context, 100)
	var mu sync.Mutex
	var errsAtRelease []error // each call's context, as it was when the call ended
	temporal.On("ExecuteWorkflow", mock.Anything, mock.Anything, "RunnerWorkflow", mock.Anything).Run(func(args mock.Arguments) {
		callCtx := args.Get(0).(context.Context)
		inFlight <- callCtx
		<-release
		mu.Lock()
		errsAtRelease = append(errsAtRelease, callCtx.Err())
		mu.Unlock()
	}).Return(nil, nil)

	starts := make([]activities.WorkflowStart, 40)
	for i := range starts {
		starts[i] = activities.WorkflowStart{ID: "runner/ci/r" + string(rune('a'+i)), Type: "RunnerWorkflow", TaskQueue: "arcflow"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&activities.Workflows{Client: temporal}).StartWorkflows(ctx, starts) }()

	var calls []context.Context
	for range 16 { // the first calls, up to the limit in flight
		calls = append(calls, <-inFlight)
	}
	cancel()
	close(release)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("StartWorkflows did not return after its calls finished")
	}
	require.ErrorContains(t, err, "not tried: context canceled", "the rest is left to the retry")
	require.Len(t, errsAtRelease, len(calls))
	for _, err := range errsAtRelease {
		require.NoError(t, err, "a call in flight is not cut short by the activity's cancellation")
	}
	for _, c := range calls {
		_, hasDeadline := c.Deadline()
		require.True(t, hasDeadline, "but is bounded on its own")
	}
	require.Less(t, len(temporal.Calls), len(starts), "no new call once cancelled")
}
