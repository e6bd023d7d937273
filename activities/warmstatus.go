package activities

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// UpdateHRAWarmStatus writes a HorizontalRunnerAutoscaler's status.warm. It is
// a patch of its own beside UpdateHRAStatus, so an autoscaler without the
// buffer writes what it always wrote.
func (k *Kubernetes) UpdateHRAWarmStatus(ctx context.Context, in HRAWarmStatusInput) error {
	var warm any = in.Warm
	if in.Clear {
		warm = nil // a merge patch's null removes the field
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"warm": warm}})
	if err != nil {
		return fmt.Errorf("warm status of hra %s/%s: %w", in.Namespace, in.Name, err)
	}
	_, err = k.Dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(in.Namespace).
		Patch(ctx, in.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("warm status of hra %s/%s: %w", in.Namespace, in.Name, err)
	}
	return nil
}

// poolStatusPatch is a pool's status as a merge patch. A pool without an
// auto buffer has no status.warm (PoolStatus.Warm is omitted), and the patch
// removes one that an earlier buffer left, so its metrics do not stay behind.
func poolStatusPatch(status PoolStatus) ([]byte, error) {
	data, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	if _, ok := fields["warm"]; !ok {
		fields["warm"] = nil
	}
	return json.Marshal(map[string]any{"status": fields})
}
