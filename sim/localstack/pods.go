package localstack

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// WaitPod waits, on a watch, until the named pod satisfies cond, and returns it.
func WaitPod(ctx context.Context, client kubernetes.Interface, namespace, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	lw := cache.NewListWatchFromClient(client.CoreV1().RESTClient(), "pods", namespace, fields.OneTermEqualSelector("metadata.name", name))
	var pod *corev1.Pod
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type == watch.Deleted {
			return false, nil
		}
		if cond(p) {
			pod = p
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// PodRunningAndReady is a WaitPod condition.
func PodRunningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
