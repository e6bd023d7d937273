package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// create makes the runner's pod (or a RunnerSet runner's StatefulSet), unless
// its start did (RunnerRevisionCreatedByStart), and moves on to Registering.
func (r *runnerRun) create(ctx workflow.Context) error {
	if r.in.Created != nil && r.in.Revision >= RunnerRevisionCreatedByStart {
		r.created(ctx, *r.in.Created) // its start created it
		return nil
	}
	if r.waitUntilRetryAt(ctx) {
		return nil
	}
	var out calls.RunnerPodOutput
	pod := r.in.Pod
	pod.ReadyUntold = r.podUntold()
	err := r.call(ctx, calls.EnsureRunnerPod, pod).Get(ctx, &out)
	if reset, limited := calls.RateLimitReset(err); limited {
		r.state.RetryAt = reset
		return nil
	}
	if err != nil {
		workflow.GetLogger(ctx).Error("runner pod cannot be created", "runner", r.in.Pod.Name, "error", err)
		r.end(ctx, EndCreateFailed, PhaseDone)
		return nil
	}
	r.created(ctx, out)
	return nil
}

// created takes the result of the runner's creation.
func (r *runnerRun) created(ctx workflow.Context, out calls.RunnerPodOutput) {
	if r.state.Pod.UID == "" {
		// No pod signal yet: the pod exists, as the activity just saw.
		r.state.Pod.UID, r.state.Pod.Exists = out.UID, true
	}
	if out.RunnerID != 0 {
		r.state.RunnerID = out.RunnerID // a JIT runner: registered by its creation
	}
	r.state.PoolToken = out.PoolToken
	r.setPhase(ctx, PhaseRegistering)
}
