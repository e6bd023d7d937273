package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// Retry of a deletion that failed after its activity's own retries.
const (
	deleteRetryMin = time.Minute
	deleteRetryMax = 10 * time.Minute
	// RunnerStateDeleteBlocked is the runner-state search attribute's value
	// while a deletion waits to be retried, so `arcflow status` and the Web UI
	// show the runner stuck, not merely Deleting.
	RunnerStateDeleteBlocked RunnerPhase = "DeleteBlocked"
)

// awaitDeletionRetry waits to try the deletion again. Failing the workflow
// instead would leave the pod, its Secret or ARC's objects behind for good,
// with nobody to retry: a refused write (an admission webhook without a
// server, a missing permission) is fixed by an operator, and the runner
// finishes by itself once it is. The activity reported the refusal where the
// operator looks (an event on the pool's resource).
func (r *runnerRun) awaitDeletionRetry(ctx workflow.Context, err error) {
	r.state.DeleteBlocked = err.Error()
	r.state.DeleteAttempts++
	wait := deleteRetryMin
	for i := 1; i < r.state.DeleteAttempts && wait < deleteRetryMax; i++ {
		wait *= 2
	}
	wait = min(wait, deleteRetryMax)
	workflow.GetLogger(ctx).Warn("cannot delete the runner's objects; retrying", "runner", r.in.Pod.Name,
		"attempt", r.state.DeleteAttempts, "retryIn", wait, "error", err)
	if r.published != RunnerStateDeleteBlocked {
		if err := workflow.UpsertTypedSearchAttributes(ctx, contract.SearchAttrRunnerState.ValueSet(string(RunnerStateDeleteBlocked))); err != nil {
			workflow.GetLogger(ctx).Warn("cannot set the runner-state search attribute", "error", err)
		}
		r.published = RunnerStateDeleteBlocked
	}
	_ = workflow.Sleep(ctx, wait)
}
