package informer

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStripResourceDropsManagedFieldsAndLastApplied(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name": "app", "generation": int64(3),
			"annotations":   map[string]any{lastApplied: `{"big":"manifest"}`, "arcflow.dev/registration-only-runner": "true"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}},
		},
		"spec": map[string]any{"replicas": int64(2)},
	}}
	out, err := Strip(u)
	require.NoError(t, err)
	got := out.(*unstructured.Unstructured)
	require.Nil(t, got.GetManagedFields())
	require.Equal(t, map[string]string{"arcflow.dev/registration-only-runner": "true"}, got.GetAnnotations())
	require.Equal(t, int64(3), got.GetGeneration())
	require.Equal(t, map[string]any{"replicas": int64(2)}, got.Object["spec"])

	onlyLastApplied := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"name": "app", "annotations": map[string]any{lastApplied: "{}"},
	}}}
	out, err = Strip(onlyLastApplied)
	require.NoError(t, err)
	_, has := out.(*unstructured.Unstructured).Object["metadata"].(map[string]any)["annotations"]
	require.False(t, has, "an emptied annotations map is removed")
}
