package webhook

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func obj(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "actions.summerwind.dev/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec,
	}}
}

func rdWith(ns, name string, runner map[string]any) *unstructured.Unstructured {
	return obj("RunnerDeployment", ns, name, map[string]any{"template": map[string]any{"spec": runner}})
}

func hraFor(ns, name, target string, triggers ...map[string]any) *unstructured.Unstructured {
	var t []any
	for _, tr := range triggers {
		t = append(t, tr)
	}
	if triggers == nil {
		t = []any{map[string]any{"githubEvent": map[string]any{"workflowJob": map[string]any{}}}}
	}
	return obj("HorizontalRunnerAutoscaler", ns, name, map[string]any{
		"scaleTargetRef": map[string]any{"name": target}, "minReplicas": int64(0), "maxReplicas": int64(5), "scaleUpTriggers": t,
	})
}

func newTestIndex(t *testing.T, objs ...runtime.Object) *Index {
	scheme := runtime.NewScheme()
	kinds := map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
		v1alpha1.RunnerDeploymentResource:           "RunnerDeploymentList",
		v1alpha1.RunnerSetResource:                  "RunnerSetList",
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, kinds, objs...)
	ix := NewIndex(dyn, "")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, ix.Start(ctx))
	return ix
}

func labelsOf(l ...string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func TestIndexMatchesLikeARC(t *testing.T) {
	ix := newTestIndex(t,
		rdWith("ci", "repo-runners", map[string]any{"repository": "Codertocat/Hello-World", "labels": labelsOf("ubuntu-latest")}),
		hraFor("ci", "repo-hra", "repo-runners"),
		rdWith("ci", "org-custom", map[string]any{"organization": "Octocoders", "group": "gpu", "labels": labelsOf("cuda")}),
		hraFor("ci", "a-org-custom-hra", "org-custom"),
		rdWith("ci", "org-default", map[string]any{"organization": "Octocoders", "labels": labelsOf("gpu", "linux")}),
		hraFor("ci", "z-org-default-hra", "org-default"),
		rdWith("ci", "ent", map[string]any{"enterprise": "acme", "labels": labelsOf("linux")}),
		hraFor("ci", "ent-hra", "ent"),
		hraFor("ci", "broken-hra", "does-not-exist"),
		rdWith("ci", "two-triggers", map[string]any{"organization": "Octocoders", "labels": labelsOf("arm")}),
		hraFor("ci", "two-triggers-hra", "two-triggers",
			map[string]any{"githubEvent": map[string]any{"workflowJob": map[string]any{}}},
			map[string]any{"githubEvent": map[string]any{"workflowJob": map[string]any{}}}),
	)
	for _, tc := range []struct {
		name string
		job  Job
		want string
	}{
		{"repository runners first", Job{Repository: "codertocat/hello-world", Org: "Octocoders", Labels: []string{"ubuntu-latest"}}, "repo-hra"},
		{"labels compare case-insensitively, self-hosted ignored", Job{Repository: "Octocoders/x", Org: "Octocoders", Labels: []string{"self-hosted", "GPU", "Linux"}}, "z-org-default-hra"},
		{"org default group before org custom group", Job{Repository: "Octocoders/x", Org: "Octocoders", Labels: []string{"gpu"}}, "z-org-default-hra"},
		{"custom group when the default does not fit", Job{Repository: "Octocoders/x", Org: "Octocoders", Labels: []string{"CUDA"}}, "a-org-custom-hra"},
		{"enterprise runners", Job{Repository: "other/x", Org: "other", Enterprise: "acme", Labels: []string{"linux"}}, "ent-hra"},
		{"a label the runners lack matches nothing", Job{Repository: "Octocoders/x", Org: "Octocoders", Labels: []string{"windows"}}, ""},
		{"an HRA with two triggers is skipped", Job{Repository: "Octocoders/x", Org: "Octocoders", Labels: []string{"arm"}}, ""},
		{"user repositories use repository runners only", Job{Repository: "someone/x", OwnerType: "User", Enterprise: "acme", Labels: []string{"linux"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := ix.Find(tc.job)
			if tc.want == "" {
				require.False(t, ok, "matched %v", m.HRA)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.want, m.HRA.Name)
		})
	}
}

func withPriority(u *unstructured.Unstructured, priority string) *unstructured.Unstructured {
	u.SetAnnotations(map[string]string{v1alpha1.PriorityAnnotation: priority})
	return u
}

// HRAs that match the same job are ordered by priority, then ARC's levels, then
// name; the first scales the job and the rest are its overflow.
func TestIndexOrdersOverlappingHRAsForSpillOver(t *testing.T) {
	linux := map[string]any{"organization": "octo-org", "labels": labelsOf("linux")}
	repo := map[string]any{"repository": "octo-org/app", "labels": labelsOf("linux")}
	job := Job{Repository: "octo-org/app", Org: "octo-org", Labels: []string{"self-hosted", "linux"}}
	find := func(objs ...runtime.Object) (string, []string) {
		m, ok := newTestIndex(t, objs...).Find(job)
		require.True(t, ok)
		return m.HRA.Name, m.Overflow
	}

	first, overflow := find(rdWith("ci", "b", linux), hraFor("ci", "b", "b"), rdWith("ci", "a", linux), hraFor("ci", "a", "a"))
	require.Equal(t, "a", first, "without priorities, the name decides")
	require.Equal(t, []string{"hra/ci/b"}, overflow)

	first, overflow = find(rdWith("ci", "b", linux), withPriority(hraFor("ci", "b", "b"), "10"),
		rdWith("ci", "a", linux), hraFor("ci", "a", "a"), rdWith("ci", "c", linux), withPriority(hraFor("ci", "c", "c"), "-1"))
	require.Equal(t, "b", first, "the highest priority first")
	require.Equal(t, []string{"hra/ci/a", "hra/ci/c"}, overflow, "then 0, then -1")

	first, overflow = find(rdWith("ci", "org", linux), hraFor("ci", "a-org", "org"), rdWith("ci", "repo", repo), hraFor("ci", "z-repo", "repo"))
	require.Equal(t, "z-repo", first, "at equal priority, repository runners before organization runners, as in ARC")
	require.Equal(t, []string{"hra/ci/a-org"}, overflow)

	first, overflow = find(rdWith("ci", "a", linux), hraFor("ci", "a", "a"))
	require.Equal(t, "a", first)
	require.Empty(t, overflow, "a lone match has no overflow")
}
