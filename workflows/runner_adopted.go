package workflows

import "go.temporal.io/sdk/workflow"

// takeOver starts the life of a runner ARC left where its pod and GitHub say
// it is: a pod that ended leaves at once (an ephemeral one that succeeded
// without a call, as GitHub removed it); a runner ARC saw registered is Idle,
// so a stop removes it with RemoveRunner, whose 422 keeps a busy one to its
// job; any other waits for its registration like a new runner. Its end
// removes ARC's finalizers, pod, Runner and emptied RunnerReplicaSet
// (PodRef.ARC).
func (r *runnerRun) takeOver(ctx workflow.Context) {
	workflow.GetLogger(ctx).Info("runner adopted from ARC", "runner", r.in.Pod.Name, "runnerID", r.state.RunnerID, "pod", r.state.Pod.Phase)
	switch {
	case r.state.Pod.Exited():
		r.afterExitOrStop(ctx)
	case r.state.RunnerID != 0:
		r.setPhase(ctx, PhaseIdle)
	default:
		r.setPhase(ctx, PhaseRegistering)
	}
}
