package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
)

// A runner pod as the pod watcher sees it: a spec, labels, managedFields and
// status fields PodStateOf does not read.
func fullPod(mutate func(*corev1.Pod)) *corev1.Pod {
	ready := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "app-abc", Namespace: "ci", UID: "uid-1", ResourceVersion: "42",
			Labels:        map[string]string{activities.LabelRunner: "true"},
			Annotations:   map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "arcflow", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "runner", Image: "summerwind/actions-runner", Env: []corev1.EnvVar{{Name: "RUNNER_NAME", Value: "app-abc"}}},
			{Name: "docker", Image: "docker:dind"},
		}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1", HostIP: "10.0.0.2",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "runner", Image: "summerwind/actions-runner", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "docker", Image: "docker:dind"},
			},
		},
	}
	if mutate != nil {
		mutate(pod)
	}
	return pod
}

func TestSlimPodKeepsWhatPodStateOfReads(t *testing.T) {
	deleting := metav1.Now()
	for name, pod := range map[string]*corev1.Pod{
		"running and ready": fullPod(nil),
		"pending":           fullPod(func(p *corev1.Pod) { p.Status.Phase, p.Status.Conditions = corev1.PodPending, nil }),
		"unschedulable": fullPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}
		}),
		"deleting": fullPod(func(p *corev1.Pod) { p.DeletionTimestamp = &deleting }),
		"runner exited 0 in a StatefulSet": fullPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
		}),
		"runner restarted after exit 1": fullPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
		}),
		"succeeded": fullPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		"its node lost": fullPod(func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
		}),
		"evicted by the kubelet": fullPod(func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted" }),
		"oom-killed": fullPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}
		}),
	} {
		t.Run(name, func(t *testing.T) {
			want := activities.PodStateOf(pod)
			slim, err := SlimPod(pod.DeepCopy())
			require.NoError(t, err)
			require.Equal(t, want, activities.PodStateOf(slim.(*corev1.Pod)))
			again, err := SlimPod(slim)
			require.NoError(t, err)
			require.Equal(t, slim, again, "idempotent")
		})
	}
}

func TestSlimPodDropsTheRest(t *testing.T) {
	slim, err := SlimPod(fullPod(nil))
	require.NoError(t, err)
	pod := slim.(*corev1.Pod)
	require.Empty(t, pod.Spec.Containers)
	require.Empty(t, pod.Labels)
	require.Empty(t, pod.Annotations)
	require.Empty(t, pod.ManagedFields)
	require.Empty(t, pod.Status.PodIP)
	require.Len(t, pod.Status.Conditions, 2, "Ready and PodScheduled")
	require.Empty(t, pod.Status.ContainerStatuses[0].Image)
}

func TestSlimPodPassesOtherObjectsThrough(t *testing.T) {
	tomb := "not a pod"
	out, err := SlimPod(tomb)
	require.NoError(t, err)
	require.Equal(t, tomb, out)
}

// The ready-untold annotation survives: the watcher reads it to decide which
// changes the pod's runner is signalled.
func TestSlimPodKeepsTheReadyUntoldAnnotation(t *testing.T) {
	slim, err := SlimPod(fullPod(func(p *corev1.Pod) { p.Annotations[activities.AnnotationReadyUntold] = "true" }))
	require.NoError(t, err)
	require.Equal(t, map[string]string{activities.AnnotationReadyUntold: "true"}, slim.(*corev1.Pod).Annotations)
	again, err := SlimPod(slim)
	require.NoError(t, err)
	require.Equal(t, slim, again, "idempotent")
}
