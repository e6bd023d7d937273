package workflows

import "github.com/arcflow/arcflow/activities/calls"

// lossCause says what took the runner away, when it was not arcflow and not
// the runner itself: its pod went or failed and Kubernetes recorded why
// (calls.LossCause), or it was deleted with no reason given.
//
// A pod that ended before any stop was heard (EndPodDeleted, EndPodFailed) is
// a loss whatever came after. Once arcflow stopped the runner, its own pod
// deletion ends the runner with a non-zero exit or a deleted pod, so those
// say nothing; but what Kubernetes recorded of its own (a lost node, an
// eviction, a preemption, an OOM kill) still took the runner: the job's failed
// completion is what made the pool stop it, and under load that stop reaches
// the runner before its pod's news does.
func (r *runnerRun) lossCause() string {
	if r.in.RegistrationOnly {
		return ""
	}
	pod := r.state.Pod
	switch r.state.EndReason {
	case EndPodDeleted, EndPodFailed:
	case EndLeftRegistered:
		if r.state.StopRequested {
			return kubernetesCause(pod.Cause)
		}
	case EndStopped:
		return kubernetesCause(pod.Cause)
	default:
		return ""
	}
	switch {
	case pod.Cause != "":
		return pod.Cause
	case pod.Phase == "Failed":
		return calls.CauseRunnerDied
	case !pod.Exists || pod.Deleting:
		return calls.CausePodDeleted
	}
	return ""
}

// kubernetesCause is cause if Kubernetes itself recorded it, "" for a runner
// that exited or a pod deleted with no reason given, which arcflow's own stop
// also brings about.
func kubernetesCause(cause string) string {
	switch cause {
	case calls.CauseNodeLost, calls.CauseEvicted, calls.CausePreempted, calls.CauseOOMKilled:
		return cause
	}
	return ""
}
