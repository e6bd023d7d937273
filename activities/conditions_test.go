package activities

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
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

// A writer whose copy of the resource is stale must not put back a list
// without another writer's newer condition: the write carries the copy's
// resourceVersion, the API server answers Conflict, and the list is computed
// again from the resource as it is now.
func TestPatchConditionsKeepsAConditionWrittenMeanwhile(t *testing.T) {
	stale := &unstructured.Unstructured{}
	stale.SetAPIVersion(v1alpha1.GroupVersion.String())
	stale.SetKind(v1alpha1.KindRunnerDeployment)
	stale.SetNamespace("ci")
	stale.SetName("app")
	stale.SetResourceVersion("1")
	require.NoError(t, unstructured.SetNestedSlice(stale.Object, []any{
		map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "ok"},
	}, "status", "conditions"))
	current := stale.DeepCopy()
	current.SetResourceVersion("2")
	require.NoError(t, unstructured.SetNestedSlice(current.Object, []any{
		map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "ok"},
		map[string]any{"type": RerunLostJobsCondition, "status": "False", "reason": "NoActionsWrite", "message": "refused"},
	}, "status", "conditions"))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.RunnerDeploymentResource: "RunnerDeploymentList",
	}, current)
	// The fake keeps no resourceVersions: it refuses a patch for a version
	// other than the current one, as the API server does.
	var patchedVersions []string
	dyn.PrependReactor("patch", "runnerdeployments", func(action k8stesting.Action) (bool, runtime.Object, error) {
		var body struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(action.(k8stesting.PatchAction).GetPatch(), &body))
		patchedVersions = append(patchedVersions, body.Metadata.ResourceVersion)
		if body.Metadata.ResourceVersion != "2" {
			return true, nil, apierrors.NewConflict(v1alpha1.RunnerDeploymentResource.GroupResource(), "app", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	resources := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci")
	failing := metav1.Condition{Type: "RunnersFailing", Status: metav1.ConditionTrue, Reason: "PodFailed", Message: "2 in a row"}
	from, wrote, err := PatchConditions(context.Background(), resources, stale, func(obj *unstructured.Unstructured) (any, bool, error) {
		return WithCondition(obj, failing, false)
	})
	require.NoError(t, err)
	require.True(t, wrote)
	require.Equal(t, []string{"1", "2"}, patchedVersions, "the stale write was refused, the fresh one taken")
	require.Equal(t, "2", from.GetResourceVersion(), "the list was computed again from the resource as it is")

	obj, err := resources.Get(context.Background(), "app", metav1.GetOptions{})
	require.NoError(t, err)
	var types []string
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		types = append(types, c.(map[string]any)["type"].(string))
	}
	require.Equal(t, []string{"Accepted", RerunLostJobsCondition, "RunnersFailing"}, types, "the condition written meanwhile is kept")
}
