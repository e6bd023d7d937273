package worker

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
)

// SlimPod is the pod watcher's informer transform: it keeps of a runner pod only
// what activities.PodStateOf reads (identity, deletion, phase, the Ready and
// PodScheduled conditions, how containers ended, what took the pod away) and
// the ready-untold annotation, and drops the spec, labels, other annotations, managedFields and
// the rest of the status. A runner pod's spec (two containers, their env, volumes)
// is most of its size; the cache holds one per live runner.
// It is idempotent, and passes anything but a pod through.
func SlimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			CreationTimestamp: pod.CreationTimestamp, DeletionTimestamp: pod.DeletionTimestamp,
		},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Reason: pod.Status.Reason},
	}
	if v, ok := pod.Annotations[activities.AnnotationReadyUntold]; ok {
		// Which changes the pod's runner is signalled (podSignalWorthy).
		slim.Annotations = map[string]string{activities.AnnotationReadyUntold: v}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.PodScheduled || c.Type == corev1.DisruptionTarget {
			slim.Status.Conditions = append(slim.Status.Conditions, corev1.PodCondition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime})
		}
	}
	for _, c := range pod.Status.ContainerStatuses {
		slim.Status.ContainerStatuses = append(slim.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, State: corev1.ContainerState{Terminated: c.State.Terminated},
			LastTerminationState: corev1.ContainerState{Terminated: c.LastTerminationState.Terminated},
		})
	}
	return slim, nil
}
