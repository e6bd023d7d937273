package activities

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// A refusal for lack of permission sets RerunLostJobs=False beside the
// resource's other conditions, and a later re-run sets it True again; the
// metric counts every outcome.
func TestReportLostJobSaysWhenReRunsLackPermission(t *testing.T) {
	rd := &unstructured.Unstructured{}
	rd.SetAPIVersion(v1alpha1.GroupVersion.String())
	rd.SetKind(v1alpha1.KindRunnerDeployment)
	rd.SetNamespace("ci")
	rd.SetName("app")
	require.NoError(t, unstructured.SetNestedSlice(rd.Object, []any{
		map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "ok"},
	}, "status", "conditions"))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.RunnerDeploymentResource: "RunnerDeploymentList",
	}, rd)
	metrics := NewLostJobMetrics(nil)
	k := &Kubernetes{Client: kubefake.NewClientset(), Dynamic: dyn, LostJobs: metrics}
	ctx := context.Background()
	pool := PoolResourceRef{Namespace: "ci", Kind: v1alpha1.KindRunnerDeployment, Name: "app"}

	conditions := func() map[string]string {
		obj, err := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci").Get(ctx, "app", metav1.GetOptions{})
		require.NoError(t, err)
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		out := map[string]string{}
		for _, c := range conds {
			m := c.(map[string]any)
			out[m["type"].(string)] = m["status"].(string) + "/" + m["reason"].(string)
		}
		return out
	}
	require.NoError(t, k.ReportLostJob(ctx, LostJobReport{Pool: pool, Cause: CauseNodeLost, Outcome: RerunNoPermission, Message: "Resource not accessible by integration"}))
	require.Equal(t, map[string]string{"Accepted": "True/Accepted", RerunLostJobsCondition: "False/NoActionsWrite"}, conditions())
	require.NoError(t, k.ReportLostJob(ctx, LostJobReport{Pool: pool, Cause: CauseEvicted, Outcome: RerunLimitReached}))
	require.Equal(t, "False/NoActionsWrite", conditions()[RerunLostJobsCondition], "a limit says nothing of the permission")
	require.NoError(t, k.ReportLostJob(ctx, LostJobReport{Pool: pool, Cause: CauseNodeLost, Outcome: RerunDone}))
	require.Equal(t, "True/Rerunning", conditions()[RerunLostJobsCondition])

	// The fake clientset names no generated object, so events are the e2e's to check.
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.total.WithLabelValues(CauseNodeLost, RerunNoPermission)))
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.total.WithLabelValues(CauseEvicted, RerunLimitReached)))
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.total.WithLabelValues(CauseNodeLost, RerunDone)))
}
