package workflows

import "github.com/arcflow/arcflow/activities/calls"

// lossCause says what took the runner away, when it was not arcflow and not
// the runner itself: its pod went or failed without a stop, and Kubernetes
// recorded why (calls.LossCause), or it was deleted with no reason given.
func (r *runnerRun) lossCause() string {
	if r.state.StopRequested || r.in.RegistrationOnly {
		return ""
	}
	pod := r.state.Pod
	switch r.state.EndReason {
	case EndPodDeleted, EndPodFailed, EndLeftRegistered:
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
