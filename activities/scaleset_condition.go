package activities

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// ScaleSetSessionCondition is the condition type that says whether a scale
// set pool's listener holds its set's session: False with reason
// HeldByAnotherListener while another session (ARC's listener, another
// arcflow, or one that died and has not expired) holds the set, so the
// service gives its jobs to none of this pool's runners. The resource watcher
// keeps it as it is when it writes its own conditions.
const ScaleSetSessionCondition = "ScaleSetSession"

// scaleSetSessionCondition is the condition a report sets.
func scaleSetSessionCondition(in calls.ScaleSetSessionReport, generation int64) metav1.Condition {
	c := metav1.Condition{Type: ScaleSetSessionCondition, ObservedGeneration: generation, LastTransitionTime: metav1.Now()}
	if in.Holder == "" {
		c.Status, c.Reason = metav1.ConditionTrue, "SessionOpen"
		c.Message = fmt.Sprintf("arcflow's listener holds the session of runner scale set %d", in.ScaleSetID)
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, "HeldByAnotherListener"
	c.Message = fmt.Sprintf("another listener holds the session of runner scale set %d (GitHub says: %s); its jobs wait in GitHub, "+
		"and arcflow takes the session as soon as that listener lets go or its session expires: stop the other listener "+
		"(ARC's: kubectl -n <controller namespace> scale deployment <gha-runner-scale-set-controller> --replicas=0, then delete its AutoscalingListener) "+
		"or remove the arcflow.dev/scale-set annotation from this pool", in.ScaleSetID, in.Holder)
	return c
}

// ReportScaleSetSession writes the ScaleSetSession condition on the pool's
// resource, and a Warning event when another listener starts holding the set.
// A pool that is gone has nothing to report on.
func (k *Kubernetes) ReportScaleSetSession(ctx context.Context, in calls.ScaleSetSessionReport) error {
	resources := k.Dynamic.Resource(PoolResource(in.Pool.Kind)).Namespace(in.Pool.Namespace)
	obj, err := resources.Get(ctx, in.Pool.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report the scale set session on %s %s/%s: %w", in.Pool.Kind, in.Pool.Namespace, in.Pool.Name, err)
	}
	want := scaleSetSessionCondition(in, obj.GetGeneration())
	before, wrote, err := PatchConditions(ctx, resources, obj, func(cur *unstructured.Unstructured) (any, bool, error) {
		return WithCondition(cur, want, false)
	})
	if err != nil {
		return fmt.Errorf("condition %s on %s %s/%s: %w", ScaleSetSessionCondition, in.Pool.Kind, in.Pool.Namespace, in.Pool.Name, err)
	}
	if wrote && in.Holder != "" && conditionReasonOf(before, ScaleSetSessionCondition) != want.Reason {
		on := corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: in.Pool.Kind, Name: in.Pool.Name,
			Namespace: in.Pool.Namespace, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
		if err := RecordEvent(ctx, k.Client, on, corev1.EventTypeWarning, want.Reason, want.Message); err != nil {
			slog.Warn("cannot record the scale set session's event", "pool", in.Pool.Namespace+"/"+in.Pool.Name, "error", err)
		}
	}
	return nil
}

// conditionReasonOf is the reason of u's condition of this type, "" without one.
func conditionReasonOf(u *unstructured.Unstructured, conditionType string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			reason, _ := m["reason"].(string)
			return reason
		}
	}
	return ""
}
