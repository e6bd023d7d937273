package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// PoolResource is the API resource of a pool's kind: RunnerSet or, for any
// other kind, RunnerDeployment.
func PoolResource(kind string) schema.GroupVersionResource {
	if kind == v1alpha1.KindRunnerSet {
		return v1alpha1.RunnerSetResource
	}
	return v1alpha1.RunnerDeploymentResource
}

// ReleasePoolResource removes PoolFinalizer from a drained pool's resource.
// A resource that is gone, or has no such finalizer, is success.
func (k *Kubernetes) ReleasePoolResource(ctx context.Context, ref PoolResourceRef) error {
	return RemovePoolFinalizer(ctx, k.Dynamic, ref)
}

// RemovePoolFinalizer removes PoolFinalizer from the resource, with a patch
// that tests the list it read, so a concurrent change retries, not clobbers.
func RemovePoolFinalizer(ctx context.Context, dyn dynamic.Interface, ref PoolResourceRef) error {
	res := dyn.Resource(PoolResource(ref.Kind)).Namespace(ref.Namespace)
	u, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	err = dropFinalizers(u.GetFinalizers(), func(patch []byte) error {
		_, err := res.Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	}, PoolFinalizer)
	if err != nil {
		return fmt.Errorf("release %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	return nil
}

// EnsurePoolFinalizer adds PoolFinalizer to a resource that is not being
// deleted and lacks it. The patch carries the resourceVersion it read, so it
// never overwrites a concurrent change of the finalizers.
func EnsurePoolFinalizer(ctx context.Context, dyn dynamic.Interface, kind string, u *unstructured.Unstructured) error {
	res := dyn.Resource(PoolResource(kind)).Namespace(u.GetNamespace())
	for attempt := 0; ; attempt++ {
		if u.GetDeletionTimestamp() != nil || slices.Contains(u.GetFinalizers(), PoolFinalizer) {
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": u.GetResourceVersion(),
			"finalizers":      append(slices.Clone(u.GetFinalizers()), PoolFinalizer),
		}})
		if err != nil {
			return err
		}
		_, err = res.Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < 3:
			// Changed since the cache saw it: read it again.
			if u, err = res.Get(ctx, u.GetName(), metav1.GetOptions{}); err != nil {
				return fmt.Errorf("get %s %s/%s: %w", kind, u.GetNamespace(), u.GetName(), err)
			}
		default:
			return fmt.Errorf("add finalizer %s to %s %s/%s: %w", PoolFinalizer, kind, u.GetNamespace(), u.GetName(), err)
		}
	}
}
