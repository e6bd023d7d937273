package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/sim/kubelet"
)

// exitRunner makes the runner container exit 0, as an ephemeral runner does after
// its job. A bare pod (restartPolicy Never) ends Succeeded. A StatefulSet's pod
// (restartPolicy Always) stays Running: the kubelet restarts the container and
// records the exit as its last termination state.
func exitRunner(ctx context.Context, kube kubernetes.Interface, namespace, name string) error {
	pod, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("runner exit %s/%s: %w", namespace, name, err)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		return kubelet.EndPod(ctx, kube, namespace, name, corev1.PodSucceeded)
	}
	now := metav1.Now()
	found := false
	for i, c := range pod.Status.ContainerStatuses {
		if c.Name != "runner" {
			continue
		}
		found = true
		started := pod.CreationTimestamp
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		pod.Status.ContainerStatuses[i].RestartCount++
		pod.Status.ContainerStatuses[i].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now,
		}}
		pod.Status.ContainerStatuses[i].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	}
	if !found {
		return fmt.Errorf("runner exit %s/%s: pod has no runner container status", namespace, name)
	}
	if _, err := kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("runner exit %s/%s: %w", namespace, name, err)
	}
	return nil
}
