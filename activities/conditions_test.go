package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWithConditionReplacesItsTypeAndKeepsTheRest(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Accepted", "status": "True", "reason": "Valid", "message": "ok"},
		map[string]any{"type": "RunnersFailing", "status": "False", "reason": "Registered", "message": "a runner registered"},
	}}}}
	failing := metav1.Condition{Type: "RunnersFailing", Status: metav1.ConditionTrue, Reason: "PodFailed", Message: "2 in a row"}
	conds, changed, err := WithCondition(obj, failing, false)
	require.NoError(t, err)
	require.True(t, changed)
	require.Len(t, conds, 2)
	require.Equal(t, "Accepted", conds[0].(map[string]any)["type"], "the others kept, in place")
	require.Equal(t, "PodFailed", conds[1].(map[string]any)["reason"])

	same := metav1.Condition{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Valid", Message: "ok, again"}
	_, changed, err = WithCondition(obj, same, true)
	require.NoError(t, err)
	require.False(t, changed, "a new message alone is no news")
	_, changed, _ = WithCondition(obj, same, false)
	require.True(t, changed, "unless the message counts")

	conds, changed, _ = WithCondition(obj, metav1.Condition{Type: "RerunLostJobs", Status: metav1.ConditionTrue, Reason: "Rerun"}, true)
	require.True(t, changed)
	require.Len(t, conds, 3, "a new type goes after the others")
}
