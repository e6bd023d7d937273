package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// UpdatePoolStatus writes a pool's status subresource and records its events. A
// resource that is gone is success: its pool is draining.
func (k *Kubernetes) UpdatePoolStatus(ctx context.Context, in PoolStatusInput) error {
	gvr := PoolResource(in.Kind)
	patch, err := poolStatusPatch(in.Status)
	if err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", in.Kind, in.Namespace, in.Name, err)
	}
	obj, err := k.Dynamic.Resource(gvr).Namespace(in.Namespace).Patch(ctx, in.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", in.Kind, in.Namespace, in.Name, err)
	}
	for _, e := range in.Events {
		reason, message, _ := strings.Cut(e, ": ")
		on := corev1.ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: in.Kind, Name: in.Name, Namespace: in.Namespace,
			UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
		}
		if err := RecordEvent(ctx, k.Client, on, corev1.EventTypeNormal, reason, message); err != nil {
			// Events are best effort, as client-go's recorder treats them: one
			// refused (a namespace being deleted takes no new objects) must not
			// hold back the pool that is draining it.
			slog.Warn("cannot record a pool event", "pool", in.Namespace+"/"+in.Name, "reason", reason, "error", err)
		}
	}
	return nil
}
