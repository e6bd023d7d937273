package activities

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
