package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities/calls"
)

func TestLossCauseReadsWhatKubernetesRecorded(t *testing.T) {
	disruption := func(reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason},
		}}}
	}
	runnerExit := func(reason string, code int32) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "docker", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}},
			{Name: calls.RunnerContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}},
		}}}
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"node gone, pod GC":      {disruption("DeletionByPodGC"), CauseNodeLost},
		"node not ready, taint":  {disruption("DeletionByTaintManager"), CauseNodeLost},
		"drained":                {disruption("EvictionByEvictionAPI"), CauseEvicted},
		"node pressure":          {disruption("TerminationByKubelet"), CauseEvicted},
		"preempted":              {disruption("PreemptionByScheduler"), CausePreempted},
		"kubelet evicted":        {&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}, CauseEvicted},
		"oom-killed":             {runnerExit("OOMKilled", 137), CauseOOMKilled},
		"runner crashed":         {runnerExit("Error", 2), CauseRunnerDied},
		"runner exited 0":        {runnerExit("Completed", 0), ""},
		"running, nothing wrong": {&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, ""},
		"condition not true": {&corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse, Reason: "DeletionByPodGC"}}}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, calls.LossCause(tc.pod))
			require.Equal(t, tc.want, PodStateOf(tc.pod).Cause)
		})
	}
}
