package deploy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The chart and the kustomize base install one runner pod policy: the same
// match and the same validation, so a user of either gets the same
// protection; the chart's users and namespace selector reach the policy, and
// turning it off removes both objects.
func TestRunnerPodPolicyIsTheSameInTheChartAndKustomize(t *testing.T) {
	chart := objects(t, helmTemplate(t))
	kustomize := objects(t, kustomizeBuild(t, kustomizeDir+"/base"))
	policyOf := func(objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
		p := find(objs, "ValidatingAdmissionPolicy", name)
		require.NotNil(t, p, "policy %s", name)
		require.NotNil(t, find(objs, "ValidatingAdmissionPolicyBinding", name), "binding %s", name)
		return p
	}
	fromChart, fromKustomize := policyOf(chart, "arcflow-runner-pods"), policyOf(kustomize, "arcflow-runner-pods")
	// kustomize does not know the kind is cluster-scoped and gives it the
	// base's namespace; the API server drops a namespace on a cluster-scoped
	// object (the apply test in this package dry-runs it).
	for _, field := range [][]string{{"spec", "matchConstraints"}, {"spec", "failurePolicy"}} {
		a, _, _ := unstructured.NestedFieldCopy(fromChart.Object, field...)
		b, _, _ := unstructured.NestedFieldCopy(fromKustomize.Object, field...)
		require.Equal(t, a, b, "%v", field)
	}
	chartRules, _, _ := unstructured.NestedSlice(fromChart.Object, "spec", "validations")
	kustomizeRules, _, _ := unstructured.NestedSlice(fromKustomize.Object, "spec", "validations")
	require.Equal(t, normalizeCEL(chartRules), normalizeCEL(kustomizeRules))
	require.Contains(t, chartRules[0].(map[string]any)["expression"], `"system:serviceaccount:kube-system:namespace-controller"`)

	custom := objects(t, helmTemplate(t, "--set", "runnerPodProtection.cascadeUsers={system:gc}",
		"--set-string", "runnerPodProtection.namespaceSelector.matchLabels.runners=true"))
	rules, _, _ := unstructured.NestedSlice(find(custom, "ValidatingAdmissionPolicy", "arcflow-runner-pods").Object, "spec", "validations")
	require.Contains(t, rules[0].(map[string]any)["expression"], `["system:gc"]`)
	selector, _, _ := unstructured.NestedStringMap(find(custom, "ValidatingAdmissionPolicyBinding", "arcflow-runner-pods").Object,
		"spec", "matchResources", "namespaceSelector", "matchLabels")
	require.Equal(t, map[string]string{"runners": "true"}, selector)

	off := kinds(objects(t, helmTemplate(t, "--set", "runnerPodProtection.enabled=false")))
	require.Zero(t, off["ValidatingAdmissionPolicy"])
	require.Zero(t, off["ValidatingAdmissionPolicyBinding"])
}

// normalizeCEL drops the whitespace YAML folding leaves, so the two files may
// wrap their expressions differently.
func normalizeCEL(rules []any) []any {
	out := make([]any, len(rules))
	for i, r := range rules {
		m := map[string]any{}
		for k, v := range r.(map[string]any) {
			if s, ok := v.(string); ok {
				v = strings.Join(strings.Fields(s), " ")
			}
			m[k] = v
		}
		out[i] = m
	}
	return out
}
