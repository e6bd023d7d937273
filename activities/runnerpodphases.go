package activities

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunnerPodPhases reports the phase of each named runner's pod, as
// PodStateOf reads it (a runner container that exited counts as ended); a
// runner without a pod, or whose pod is being deleted, is left out. One list
// of the pool's pods, served from the API server's watch cache.
func (k *Kubernetes) RunnerPodPhases(ctx context.Context, in RunnerPodPhasesInput) (map[string]corev1.PodPhase, error) {
	pods, err := k.Client.CoreV1().Pods(in.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector:   LabelPool + "=" + in.Pool,
		ResourceVersion: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("list pods of pool %s/%s: %w", in.Namespace, in.Pool, err)
	}
	wanted := make(map[string]bool, len(in.Names))
	for _, name := range in.Names {
		wanted[name] = true
	}
	phases := map[string]corev1.PodPhase{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !wanted[pod.Name] || pod.DeletionTimestamp != nil {
			continue
		}
		phases[pod.Name] = PodStateOf(pod).Phase
	}
	return phases, nil
}
