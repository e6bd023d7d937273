package activities

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// WithCondition is obj's status conditions with c in place of the one of its
// type (or after the others), the rest kept. changed is false when that
// condition already has c's status and reason, and its message too unless
// newsOnly (a new message alone is then no news): nothing to write.
func WithCondition(obj *unstructured.Unstructured, c metav1.Condition, newsOnly bool) (conds []any, changed bool, err error) {
	encoded, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return nil, false, err
	}
	have, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	conds, replaced := make([]any, 0, len(have)+1), false
	for _, h := range have {
		if m, ok := h.(map[string]any); ok && m["type"] == c.Type {
			if m["status"] == string(c.Status) && m["reason"] == c.Reason && (newsOnly || m["message"] == c.Message) {
				return nil, false, nil
			}
			h, replaced = encoded, true
		}
		conds = append(conds, h)
	}
	if !replaced {
		conds = append(conds, encoded)
	}
	return conds, true, nil
}

// PatchConditions writes the status conditions that want computes from obj,
// guarded by obj's resourceVersion. A merge patch replaces the list whole, so
// a writer that read obj before another wrote a condition (the re-run
// workflow's, the watcher's, the budget watcher's) would put back a list
// without it: the condition was lost, and what waited for it waited in vain.
// On a conflict it reads the resource again and computes again. It returns
// the object the written list was computed from, and whether it wrote.
func PatchConditions(ctx context.Context, resources dynamic.ResourceInterface, obj *unstructured.Unstructured,
	want func(*unstructured.Unstructured) (conds any, write bool, err error)) (*unstructured.Unstructured, bool, error) {
	const attempts = 5
	for attempt := 1; ; attempt++ {
		conds, write, err := want(obj)
		if err != nil || !write {
			return obj, false, err
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion()},
			"status":   map[string]any{"conditions": conds},
		})
		if err != nil {
			return obj, false, fmt.Errorf("encode conditions: %w", err)
		}
		_, err = resources.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil {
			return obj, true, nil
		}
		if !apierrors.IsConflict(err) || attempt == attempts {
			return obj, false, fmt.Errorf("write the conditions of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		fresh, err := resources.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return obj, false, fmt.Errorf("read %s/%s again after a conflict: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		obj = fresh
	}
}
