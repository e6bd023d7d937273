package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// takeOver starts the life of a runner ARC left, or of one of arcflow's own
// whose workflow was lost, where its pod and GitHub say it is: a pod that
// ended leaves at once (an ephemeral one that succeeded without a call, as
// GitHub removed it); a JIT one whose pod is not Ready yet waits for it; a
// registered one is Idle, so a stop removes it with RemoveRunner, whose 422
// keeps a busy one to its job; any other waits for its registration like a
// new runner. The end of one of ARC's removes ARC's finalizers, pod, Runner
// and emptied RunnerReplicaSet (PodRef.ARC).
func (r *runnerRun) takeOver(ctx workflow.Context) {
	if r.in.Adopted.Own && r.state.Pod.Exists {
		r.refreshPod(ctx)
	}
	workflow.GetLogger(ctx).Info("runner taken over", "own", r.in.Adopted.Own, "runner", r.in.Pod.Name, "runnerID", r.state.RunnerID, "pod", r.state.Pod.Phase)
	switch {
	case r.state.Pod.Exited():
		r.afterExitOrStop(ctx)
	case r.in.Pod.JIT && !r.state.Pod.Ready:
		r.setPhase(ctx, PhaseRegistering) // its runner has not come up yet (awaitJITStart)
	case r.in.Pod.JIT:
		r.state.JITStarted = true
		r.setPhase(ctx, PhaseIdle)
	case r.state.RunnerID != 0:
		r.setPhase(ctx, PhaseIdle)
	default:
		r.setPhase(ctx, PhaseRegistering)
	}
}

// refreshPod reads the pod of a runner taken over from the cluster as it is
// now: it may have ended between the pool's listing and this workflow's
// start, and the watcher's update then found no workflow to tell (a finished
// pod taken for Running would wait for a registration that never comes).
// When it cannot be read, the pool's listing stands, and the watcher's next
// update corrects it.
func (r *runnerRun) refreshPod(ctx workflow.Context) {
	var now calls.PodState
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.GetRunnerPod, r.podRef()).Get(ctx, &now); err != nil {
		workflow.GetLogger(ctx).Warn("cannot read the pod of a runner taken over", "runner", r.in.Pod.Name, "error", err)
		return
	}
	r.state.Pod = now
}
