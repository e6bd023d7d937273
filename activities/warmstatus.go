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

// HRAWarmStatusInput is the warm buffer an autoscaler with
// arcflow.dev/idle-runners: auto chose.
type HRAWarmStatusInput struct {
	Namespace, Name string
	Warm            v1alpha1.WarmRunnersStatus
}

// UpdateHRAWarmStatus writes a HorizontalRunnerAutoscaler's status.warm. It is
// a patch of its own beside UpdateHRAStatus, so an autoscaler without the
// buffer writes what it always wrote.
func (k *Kubernetes) UpdateHRAWarmStatus(ctx context.Context, in HRAWarmStatusInput) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"warm": in.Warm}})
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
