package deploy_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// grant is one verb on one resource of one API group.
type grant struct{ group, resource, verb string }

func (g grant) String() string { return fmt.Sprintf("%s %s/%s", g.verb, g.group, g.resource) }

// grants flattens a Role's or ClusterRole's rules.
func grants(t *testing.T, role *unstructured.Unstructured) map[grant]bool {
	t.Helper()
	require.NotNil(t, role)
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	out := map[grant]bool{}
	for _, r := range rules {
		r := r.(map[string]any)
		for _, g := range r["apiGroups"].([]any) {
			for _, res := range r["resources"].([]any) {
				for _, v := range r["verbs"].([]any) {
					out[grant{g.(string), res.(string), v.(string)}] = true
				}
			}
		}
	}
	return out
}

func sorted(gs map[grant]bool) []string {
	var out []string
	for g := range gs {
		out = append(out, g.String())
	}
	sort.Strings(out)
	return out
}

// What the worker needs beyond reading its resources: the finalizer it keeps on
// RunnerDeployments and RunnerSets, and reading the admission webhook
// configurations (cluster-scoped, read-only).
var finalizerGrants = []grant{
	{"actions.summerwind.dev", "runnerdeployments", "update"}, {"actions.summerwind.dev", "runnerdeployments", "patch"},
	{"actions.summerwind.dev", "runnersets", "update"}, {"actions.summerwind.dev", "runnersets", "patch"},
	{"actions.summerwind.dev", "runnerdeployments/finalizers", "update"}, {"actions.summerwind.dev", "runnersets/finalizers", "update"},
}

var admissionGrants = []grant{
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "get"},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "list"},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "watch"},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "get"},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "list"},
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "watch"},
}

// The ClusterRole of the chart and of the kustomize base grant the worker the
// same, with and without containerMode: kubernetes, including the finalizer
// and admission webhook rules.
func TestWorkerClusterRole(t *testing.T) {
	t.Parallel()
	chart := grants(t, find(objects(t, helmTemplate(t)), "ClusterRole", "arcflow-worker"))
	for _, g := range slices.Concat(finalizerGrants, admissionGrants) {
		require.True(t, chart[g], "the chart's ClusterRole grants %s", g)
	}
	require.False(t, chart[grant{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"}], "read-only")
	base := grants(t, find(objects(t, kustomizeBuild(t, overlay(t))), "ClusterRole", "arcflow-worker"))
	require.Equal(t, sorted(chart), sorted(base), "the chart and the kustomize base grant the same")

	chart = grants(t, find(objects(t, helmTemplate(t, "--set", "rbac.allowGrantingKubernetesContainerModePermissions=true")), "ClusterRole", "arcflow-worker"))
	base = grants(t, find(objects(t, kustomizeBuild(t, overlay(t, "kubernetes-mode"))), "ClusterRole", "arcflow-worker"))
	require.Equal(t, sorted(chart), sorted(base), "kubernetes mode: the chart and the component grant the same")
	require.True(t, chart[grant{"", "pods/exec", "create"}])
}

// scope.singleNamespace installs Roles only: every grant of the ClusterRole,
// except the cluster-scoped reads, in the watched namespace; the ARC guard's
// reads in the Lease's namespace; nothing cluster-wide.
func TestChartSingleNamespaceHasNoClusterRoles(t *testing.T) {
	t.Parallel()
	for _, kubernetesMode := range []string{"false", "true"} {
		mode := []string{"--set", "rbac.allowGrantingKubernetesContainerModePermissions=" + kubernetesMode}
		cluster := grants(t, find(objects(t, helmTemplate(t, mode...)), "ClusterRole", "arcflow-worker"))
		objs := objects(t, helmTemplate(t, append(mode, "--set", "scope.singleNamespace=true", "--set", "scope.watchNamespace=ci",
			"--set", "arcController.lease=arc-system/arc-leader")...))
		n := kinds(objs)
		require.Zero(t, n["ClusterRole"], "kubernetes mode %s", kubernetesMode)
		require.Zero(t, n["ClusterRoleBinding"], "kubernetes mode %s", kubernetesMode)
		require.Equal(t, 4, n["Role"], "the worker's, the ARC guard's, leader election, the webhook's")
		require.Equal(t, 4, n["RoleBinding"])

		worker := find(objs, "Role", "arcflow-worker")
		require.Equal(t, "ci", worker.GetNamespace())
		want := map[grant]bool{}
		for g := range cluster {
			// The ARC guard's Lease read moves to its own Role; admission webhook
			// configurations are cluster-scoped and left out.
			if g.group != "admissionregistration.k8s.io" && g.resource != "leases" {
				want[g] = true
			}
		}
		require.Equal(t, sorted(want), sorted(grants(t, worker)), "the watched namespace's Role holds the ClusterRole's namespaced grants")

		guard := find(objs, "Role", "arcflow-worker-arc-controller")
		require.Equal(t, "arc-system", guard.GetNamespace())
		require.Equal(t, []string{"get coordination.k8s.io/leases", "list /pods"}, sorted(grants(t, guard)))

		hook := find(objs, "Role", "arcflow-webhook")
		require.Equal(t, "ci", hook.GetNamespace())
		require.Equal(t, sorted(grants(t, find(objects(t, helmTemplate(t)), "ClusterRole", "arcflow-webhook"))), sorted(grants(t, hook)))

		for binding, role := range map[string]*unstructured.Unstructured{
			"arcflow-worker": worker, "arcflow-worker-arc-controller": guard, "arcflow-webhook": hook,
		} {
			b := find(objs, "RoleBinding", binding)
			require.NotNil(t, b, binding)
			require.Equal(t, role.GetNamespace(), b.GetNamespace(), binding)
			require.Equal(t, role.GetName(), nested(t, b, "roleRef", "name"), binding)
			require.Equal(t, "Role", nested(t, b, "roleRef", "kind"), binding)
			subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
			sa := "arcflow-worker"
			if binding == "arcflow-webhook" {
				sa = "arcflow-webhook"
			}
			require.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": releaseNS}}, subjects, binding)
		}
		for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
			require.Equal(t, "ci", lastFlag(t, args(container(t, objs, d)), "watch-namespace"), d)
		}
	}

	// The guard off: no Role in ARC's namespace. The watched namespace defaults
	// to the release's.
	objs := objects(t, helmTemplate(t, "--set", "scope.singleNamespace=true", "--set", "arcController.lease="))
	require.Nil(t, find(objs, "Role", "arcflow-worker-arc-controller"))
	require.Equal(t, releaseNS, find(objs, "Role", "arcflow-worker").GetNamespace())
	require.Zero(t, kinds(objs)["ClusterRole"])
}
