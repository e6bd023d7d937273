package activities

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RecordEvent records a Kubernetes Event from arcflow on an object. The status
// activity and the resource watcher both use it.
func RecordEvent(ctx context.Context, client kubernetes.Interface, on corev1.ObjectReference, eventType, reason, message string) error {
	now := metav1.Now()
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: on.Name + ".", Namespace: on.Namespace},
		InvolvedObject: on,
		Reason:         reason, Message: message, Type: eventType,
		Source:         corev1.EventSource{Component: "arcflow"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := client.CoreV1().Events(on.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("event on %s %s/%s: %w", on.Kind, on.Namespace, on.Name, err)
	}
	return nil
}
