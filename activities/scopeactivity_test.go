package activities

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// The scope is the other HRAs of the namespace whose target registers in the
// same repository; the asking one, other repositories, other namespaces and
// HRAs without a target do not count.
func TestLastScaleOutInScopeReadsTheScopesAutoscalers(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	rd := func(ns, name, repo string) *v1alpha1.RunnerDeployment {
		r := &v1alpha1.RunnerDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		r.Spec.Template.Spec.Repository = repo
		return r
	}
	rs := &v1alpha1.RunnerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "cache"}}
	rs.Spec.Repository = "octo/app"
	hra := func(ns, name, kind, target string, lastJob time.Duration) *v1alpha1.HorizontalRunnerAutoscaler {
		h := &v1alpha1.HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name = kind, target
		if lastJob != 0 {
			at := metav1.NewTime(t0.Add(lastJob))
			h.Status.Warm = &v1alpha1.WarmRunnersStatus{LastArrivalTime: &at}
		}
		return h
	}
	objs := []runtime.Object{
		rd("ci", "app", "octo/app"), rd("ci", "web", "octo/app"), rd("ci", "other", "octo/other"), rd("elsewhere", "app", "octo/app"), rs,
		hra("ci", "app", "", "app", 3*time.Minute), // the one asking
		hra("ci", "web", "RunnerDeployment", "web", time.Minute),
		hra("ci", "api", "", "web", 0), // no buffer of its own
		hra("ci", "cache", "RunnerSet", "cache", 2*time.Minute),
		hra("ci", "other", "", "other", 5*time.Minute),    // another repository
		hra("ci", "gone", "", "missing", 6*time.Minute),   // no target
		hra("elsewhere", "app", "", "app", 7*time.Minute), // another namespace
	}
	var listed []runtime.Object
	for _, o := range objs {
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		require.NoError(t, err)
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion(v1alpha1.GroupVersion.String())
		u.SetKind(reflect.TypeOf(o).Elem().Name())
		listed = append(listed, u)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
		v1alpha1.RunnerDeploymentResource:           "RunnerDeploymentList",
		v1alpha1.RunnerSetResource:                  "RunnerSetList",
	}, listed...)
	k := &Kubernetes{Dynamic: dyn}

	out, err := k.LastArrivalInScope(context.Background(), ScopeActivityInput{Namespace: "ci", Scope: "repos/octo/app", Except: "app"})
	require.NoError(t, err)
	require.Equal(t, ScopeActivityOutput{LastArrival: t0.Add(2 * time.Minute), Autoscalers: 3}, out)

	out, err = k.LastArrivalInScope(context.Background(), ScopeActivityInput{Namespace: "ci", Scope: "orgs/octo", Except: "app"})
	require.NoError(t, err)
	require.Equal(t, ScopeActivityOutput{}, out, "no autoscaler registers there")
}
