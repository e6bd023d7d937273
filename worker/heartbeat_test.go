package worker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// slowCall stands for a GitHub or Kubernetes call that takes a while and never
// heartbeats itself.
func slowCall(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func callWithTimeouts(ctx workflow.Context, heartbeat, d time.Duration) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, HeartbeatTimeout: heartbeat,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	return workflow.ExecuteActivity(ctx, slowCall, d).Get(ctx, nil)
}

// runSlowCall runs one slowCall of d under a heartbeat timeout, with or without
// the interceptor. The test environment enforces heartbeat timeouts in real time.
func runSlowCall(t *testing.T, withInterceptor bool, heartbeat, d time.Duration) error {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	// The test environment runs the activity while the workflow waits on it,
	// and its deadlock detector (1 s by default) counts that time: a 1 s
	// activity raced it and lost on a loaded machine ("workflow goroutine
	// root didn't yield for over 1s"). The detector is not the subject here.
	options := sdkworker.Options{DeadlockDetectionTimeout: time.Minute}
	if withInterceptor {
		options.Interceptors = []interceptor.WorkerInterceptor{&heartbeats{every: heartbeat / 5}}
	}
	env.SetWorkerOptions(options)
	env.RegisterActivity(slowCall)
	env.ExecuteWorkflow(callWithTimeouts, heartbeat, d)
	require.True(t, env.IsWorkflowCompleted())
	return env.GetWorkflowError()
}

// An activity that takes longer than its heartbeat timeout and never heartbeats
// itself lives as long as its worker does: the interceptor heartbeats for it.
func TestTheInterceptorKeepsALongActivityAlive(t *testing.T) {
	require.NoError(t, runSlowCall(t, true, 300*time.Millisecond, time.Second))
}

// Without it the same activity times out: the heartbeat timeout is real, so a
// dead worker's activity is retried after it.
func TestWithoutTheInterceptorTheSameActivityTimesOut(t *testing.T) {
	err := runSlowCall(t, false, 300*time.Millisecond, time.Second)
	var timeout *temporal.TimeoutError
	require.ErrorAs(t, err, &timeout)
	require.Equal(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, timeout.TimeoutType())
}
