package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// KwokNode is a node the stack's kwok plays (its annotation says so), with
// room for any test's pods, the given extra labels and taints.
func KwokNode(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1k"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("1M"),
	}
	all := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
	for k, v := range labels {
		all[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      all,
		},
		Spec:   corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// WaitNodeReady waits, on a watch, until the named node reports Ready.
func WaitNodeReady(ctx context.Context, client kubernetes.Interface, name string) error {
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", name))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(ev watch.Event) (bool, error) {
		node, ok := ev.Object.(*corev1.Node)
		if !ok {
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	return err
}

// EndPod makes a pod on the fake node finish as a real one would when its runner
// exits: phase Succeeded (exit code 0) or Failed (exit code 1), with every container
// terminated.
func EndPod(ctx context.Context, client kubernetes.Interface, namespace, name string, phase corev1.PodPhase) error {
	if phase != corev1.PodSucceeded && phase != corev1.PodFailed {
		return fmt.Errorf("end pod %s/%s: phase must be Succeeded or Failed, not %q", namespace, name, phase)
	}
	pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("end pod %s/%s: %w", namespace, name, err)
	}
	exitCode, reason := int32(0), "Completed"
	if phase == corev1.PodFailed {
		exitCode, reason = 1, "Error"
	}
	now := metav1.Now()
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:  c.Name,
			Image: c.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: pod.CreationTimestamp, FinishedAt: now,
			}},
		})
	}
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			pod.Status.Conditions[i].Status = corev1.ConditionFalse
			pod.Status.Conditions[i].LastTransitionTime = now
		}
	}
	if _, err := client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("end pod %s/%s: %w", namespace, name, err)
	}
	return nil
}
