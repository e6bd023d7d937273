package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// HandBackReservations writes the queued jobs a drained autoscaler holds into
// its HRA's spec.capacityReservations, in the form ARC's webhook server
// writes them, so that ARC's controller creates their runners; and removes
// the ones whose job completed or whose hand-back ended (`arcflow drain`,
// `arcflow drain --undo`). A missing HRA has nothing to hand back to.
func (k *Kubernetes) HandBackReservations(ctx context.Context, in calls.HandBackInput) (calls.HandBackOutput, error) {
	out, err := HandBackToHRA(ctx, k.Dynamic, in)
	if apierrors.IsForbidden(err) {
		return out, temporal.NewNonRetryableApplicationError(
			err.Error()+" (grant the worker update on horizontalrunnerautoscalers to hand jobs back to ARC)", ErrTypeForbidden, nil)
	}
	return out, err
}

// HandBackToHRA applies in to an HRA's spec.capacityReservations: an update
// that carries the resourceVersion it read, read again on a conflict, and
// none when nothing changes. `arcflow drain` calls it too.
func HandBackToHRA(ctx context.Context, dyn dynamic.Interface, in calls.HandBackInput) (calls.HandBackOutput, error) {
	add := make([]map[string]any, 0, len(in.Add))
	for _, r := range in.Add {
		if !calls.HandedBack(r.Name) {
			return calls.HandBackOutput{}, fmt.Errorf("hand back to hra %s/%s: entry %q is not named %s<job id>", in.Namespace, in.Name, r.Name, calls.HandBackPrefix)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r)
		if err != nil {
			return calls.HandBackOutput{}, fmt.Errorf("hand back to hra %s/%s: entry %s: %w", in.Namespace, in.Name, r.Name, err)
		}
		add = append(add, m)
	}
	hras := dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(in.Namespace)
	var out calls.HandBackOutput
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := hras.Get(ctx, in.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		entries, _, err := unstructured.NestedSlice(u.Object, "spec", "capacityReservations")
		if err != nil {
			return fmt.Errorf("read spec.capacityReservations: %w", err)
		}
		var merged []any
		merged, out = mergeHandBack(entries, add, in)
		if out == (calls.HandBackOutput{}) {
			return nil
		}
		if len(merged) == 0 {
			unstructured.RemoveNestedField(u.Object, "spec", "capacityReservations")
		} else if err := unstructured.SetNestedSlice(u.Object, merged, "spec", "capacityReservations"); err != nil {
			return fmt.Errorf("write spec.capacityReservations: %w", err)
		}
		_, err = hras.Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return calls.HandBackOutput{}, nil
	case err != nil:
		return calls.HandBackOutput{}, fmt.Errorf("hand back to hra %s/%s: %w", in.Namespace, in.Name, err)
	}
	return out, nil
}

// mergeHandBack is entries with arcflow's named ones removed as in says and
// add written over them by name. Others' entries keep their place; a
// duplicate of one of arcflow's names goes.
func mergeHandBack(entries []any, add []map[string]any, in calls.HandBackInput) ([]any, calls.HandBackOutput) {
	var out calls.HandBackOutput
	remove := map[string]bool{}
	for _, name := range in.Remove {
		remove[name] = true
	}
	adding := map[string]map[string]any{}
	for _, m := range add {
		adding[m["name"].(string)] = m
	}
	seen := map[string]bool{}
	merged := make([]any, 0, len(entries)+len(add))
	for _, e := range entries {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		if !calls.HandedBack(name) {
			merged = append(merged, e)
			continue
		}
		if seen[name] || ((in.RemoveAll || remove[name]) && adding[name] == nil) {
			out.Removed++
			continue
		}
		seen[name] = true
		if a := adding[name]; a != nil && !sameTime(m["expirationTime"], a["expirationTime"]) {
			e = a
			out.Added++
		}
		merged = append(merged, e)
	}
	for _, m := range add {
		if name := m["name"].(string); !seen[name] {
			seen[name] = true
			merged = append(merged, m)
			out.Added++
		}
	}
	return merged, out
}

// sameTime compares two RFC 3339 times as a resource holds them.
func sameTime(a, b any) bool {
	as, _ := a.(string)
	bs, _ := b.(string)
	at, errA := time.Parse(time.RFC3339, as)
	bt, errB := time.Parse(time.RFC3339, bs)
	return errA == nil && errB == nil && at.Equal(bt)
}
