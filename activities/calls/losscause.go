package calls

import (
	corev1 "k8s.io/api/core/v1"
)

// Causes of a runner pod's loss that infrastructure, not the job, brought
// about. They label the lost-jobs metric and the re-run workflow's events.
const (
	CauseNodeLost   = "node-lost"  // its node went away (pod GC, taint manager)
	CauseEvicted    = "evicted"    // the Eviction API (a drain) or the kubelet under pressure
	CausePreempted  = "preempted"  // the scheduler made room for a pod of higher priority
	CauseOOMKilled  = "oom-killed" // the runner container passed its memory limit
	CauseRunnerDied = "runner-died"
	// CausePodDeleted: deleted by someone other than arcflow, for no reason
	// Kubernetes recorded (kubectl delete, a controller). The runner workflow
	// sets it; the pod itself does not say.
	CausePodDeleted = "pod-deleted"
)

// LossCause reads what Kubernetes recorded about why a pod is going or went:
// the DisruptionTarget condition that the pod GC, the taint manager, the
// Eviction API, the scheduler and the kubelet set before they delete or stop a
// pod; the pod's status reason; or how its runner container ended. Empty when
// nothing says (a pod that runs, or one deleted with no recorded cause).
func LossCause(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case "DeletionByPodGC", "DeletionByTaintManager":
			return CauseNodeLost
		case "EvictionByEvictionAPI", "TerminationByKubelet":
			return CauseEvicted
		case "PreemptionByScheduler":
			return CausePreempted
		}
	}
	switch pod.Status.Reason {
	case "Evicted":
		return CauseEvicted
	case "NodeLost", "Shutdown", "Terminated", "NodeShutdown":
		return CauseNodeLost
	case "Preempting":
		return CausePreempted
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != RunnerContainerName || c.State.Terminated == nil {
			continue
		}
		switch exit := c.State.Terminated; {
		case exit.Reason == "OOMKilled":
			return CauseOOMKilled
		case exit.ExitCode != 0:
			return CauseRunnerDied
		}
	}
	return ""
}
