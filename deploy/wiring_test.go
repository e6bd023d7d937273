package deploy_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arcflow/arcflow/deploy/monitoring"
)

// allAlerts are the alerts of the chart's values, in the order of the rules.
var allAlerts = []string{
	"ArcflowWorkerDown", "ArcflowWorkerNoLeader", "ArcflowRunnersFailing", "ArcflowResourceNotAccepted",
	"ArcflowWebhookDown", "ArcflowWebhookUnavailable", "ArcflowWebhookBadSignatures",
	"ArcflowTemporalTaskBacklog", "ArcflowTemporalDown", "ArcflowJobsWaitingLong", "ArcflowScaleSetJobsWaiting",
	"ArcflowGitHubRateLimitLow",
}

// With the new options off, the chart renders what it rendered before them.
func TestChartDefaultsRenderNoOptionalObjects(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t))
	require.Equal(t, map[string]int{
		"ServiceAccount": 2, "ClusterRole": 2, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
		"Deployment": 2, "Service": 2, "PodDisruptionBudget": 2,
		// Not optional: what keeps busy runner pods out of a cascade.
		"ValidatingAdmissionPolicy": 1, "ValidatingAdmissionPolicyBinding": 1,
		// The bundled Temporal, the default since temporal.address became empty:
		// its StatefulSet, Service and NetworkPolicy (temporal_test.go).
		"StatefulSet": 1, "NetworkPolicy": 1,
	}, kinds(objs))
}

// Every option on: each new object refers to Services, ports and pods that the
// same render has, so a ServiceMonitor scrapes something, an Ingress reaches the
// webhook, and a NetworkPolicy admits the ports the pods serve.
func TestChartOptionsAreWiredTogether(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t, everythingOn...))
	require.Equal(t, 3, kinds(objs)["ServiceMonitor"], "the worker's, the webhook's and the bundled Temporal's")
	require.Equal(t, 3, kinds(objs)["NetworkPolicy"], "the worker's, the webhook's and the bundled Temporal's")
	require.Equal(t, 1, kinds(objs)["Ingress"])
	require.Equal(t, 1, kinds(objs)["PrometheusRule"])
	requireWired(t, objs, releaseNS)

	ing := find(objs, "Ingress", "arcflow-webhook")
	require.Equal(t, "nginx", nested(t, ing, "spec", "ingressClassName"))
	require.Equal(t, "letsencrypt", ing.GetAnnotations()["cert-manager.io/cluster-issuer"])
	rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
	require.Len(t, rules, 2)
	require.Equal(t, []string{"Exact /", "Exact /webhook"}, ingressPaths(t, rules[0]), "GitHub's paths by default, not /metrics")
	require.Equal(t, []string{"Prefix /"}, ingressPaths(t, rules[1]))

	for _, sm := range []string{"arcflow-worker", "arcflow-webhook", "arcflow-temporal"} {
		o := find(objs, "ServiceMonitor", sm)
		require.NotNil(t, o, sm)
		require.Equal(t, "kube-prometheus-stack", o.GetLabels()["release"])
		endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
		require.Equal(t, "15s", endpoints[0].(map[string]any)["interval"])
		require.Equal(t, "5s", endpoints[0].(map[string]any)["scrapeTimeout"])
	}
	rule := find(objs, "PrometheusRule", "arcflow")
	require.Equal(t, "kube-prometheus-stack", rule.GetLabels()["release"])
	require.Equal(t, allAlerts, alertNames(t, rule))
	require.Contains(t, ruleExpr(t, rule, "ArcflowJobsWaitingLong"), "> 900", "the minutes value reaches the rule")

	np := find(objs, "NetworkPolicy", "arcflow-webhook")
	from, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	peers := from[0].(map[string]any)["from"].([]any)
	require.Len(t, peers, 3, "the ingress controller, Prometheus and the extra ipBlock")
	require.Equal(t, map[string]any{"cidr": "192.30.252.0/22"}, peers[2].(map[string]any)["ipBlock"])
}

// Without the webhook, nothing of the options refers to it.
func TestChartOptionsWithoutTheWebhook(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t, append(slices.Clone(everythingOn), "--set", "githubWebhookServer.enabled=false")...))
	for _, o := range objs {
		switch o.GetKind() {
		case "Service", "Ingress", "ServiceMonitor", "NetworkPolicy":
			require.NotContains(t, o.GetName(), "webhook", "%s %s", o.GetKind(), o.GetName())
		}
	}
	require.Equal(t, 2, kinds(objs)["ServiceMonitor"], "the worker's and the bundled Temporal's")
	require.Equal(t, 2, kinds(objs)["NetworkPolicy"], "the worker's and the bundled Temporal's")
	require.Zero(t, kinds(objs)["Ingress"])
	requireWired(t, objs, releaseNS)
	names := alertNames(t, find(objs, "PrometheusRule", "arcflow"))
	require.NotContains(t, names, "ArcflowWebhookDown")
	require.NotContains(t, names, "ArcflowJobsWaitingLong", "the webhook exports the job startup histogram")
	require.Contains(t, names, "ArcflowWorkerDown")
	require.Contains(t, names, "ArcflowScaleSetJobsWaiting", "a scale set needs no webhook, and the worker exports its metrics")
}

// Single alerts can be turned off, and a zero `for` is left out.
func TestChartAlertValues(t *testing.T) {
	t.Parallel()
	rule := objects(t, helmTemplate(t, "--set", "metrics.prometheusRule.enabled=true",
		"--set", "metrics.prometheusRule.alerts.ArcflowGitHubRateLimitLow.enabled=false",
		"--set", "metrics.prometheusRule.alerts.ArcflowWorkerDown.for=0m",
		"--set", "metrics.prometheusRule.runbookBaseURL=https://wiki.example.org/arcflow",
		"--show-only", "templates/prometheusrule.yaml"))[0]
	require.Equal(t, slices.DeleteFunc(slices.Clone(allAlerts), func(s string) bool { return s == "ArcflowGitHubRateLimitLow" }), alertNames(t, rule))
	for _, r := range ruleList(t, rule) {
		if r["alert"] == "ArcflowWorkerDown" {
			require.NotContains(t, r, "for")
			require.Equal(t, "https://wiki.example.org/arcflow#arcflowworkerdown", r["annotations"].(map[string]any)["runbook_url"])
		}
	}
}

// The kustomize base with every component: the same wiring, and the dashboard.
func TestKustomizeComponentsAreWiredTogether(t *testing.T) {
	t.Parallel()
	base := objects(t, kustomizeBuild(t, overlay(t)))
	objs := objects(t, kustomizeBuild(t, overlay(t, "ingress", "servicemonitor", "prometheusrule", "networkpolicy", "dashboard")))
	require.Len(t, objs, len(base)+8, "an Ingress, a Service and two ServiceMonitors, a PrometheusRule, two NetworkPolicies, a ConfigMap")
	requireWired(t, objs, "arcflow-system")
	require.Equal(t, allAlerts, alertNames(t, find(objs, "PrometheusRule", "arcflow")))
	for _, o := range objs {
		if namespaced(o) {
			require.Equal(t, "arcflow-system", o.GetNamespace(), "%s %s: in the base's namespace", o.GetKind(), o.GetName())
		}
	}
}

// namespaced: not one of the cluster-scoped kinds of the base.
func namespaced(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding":
		return false
	}
	return true
}

// requireWired checks the references between the rendered objects; objects
// without a namespace are in ns.
func requireWired(t *testing.T, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	nsOf := func(o *unstructured.Unstructured) string {
		if o.GetNamespace() != "" {
			return o.GetNamespace()
		}
		return ns
	}
	services := func(namespace string, selector map[string]any) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "Service" && nsOf(o) == namespace && matches(selector, o.GetLabels()) {
				out = append(out, o)
			}
		}
		return out
	}
	// podsOf is the Deployment (or StatefulSet) whose pods a selector picks; there must be one.
	podsOf := func(namespace string, selector map[string]any, what string) *unstructured.Unstructured {
		var found []*unstructured.Unstructured
		for _, o := range objs {
			labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
			if (o.GetKind() == "Deployment" || o.GetKind() == "StatefulSet") && nsOf(o) == namespace && matches(selector, labels) {
				found = append(found, o)
			}
		}
		require.Len(t, found, 1, "%s selects the pods of one Deployment", what)
		return found[0]
	}
	requireContainerPort := func(d *unstructured.Unstructured, port any, what string) {
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		var names []any
		for _, c := range containers {
			for _, p := range c.(map[string]any)["ports"].([]any) {
				names = append(names, p.(map[string]any)["name"])
			}
		}
		require.Contains(t, names, port, "%s: a port of %s's pods", what, d.GetName())
	}
	servicePort := func(svc *unstructured.Unstructured, name, what string) {
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		for _, p := range ports {
			if p := p.(map[string]any); p["name"] == name {
				selector, _, _ := unstructured.NestedMap(svc.Object, "spec", "selector")
				requireContainerPort(podsOf(nsOf(svc), selector, "Service "+svc.GetName()), p["targetPort"], what)
				return
			}
		}
		require.Failf(t, "no such Service port", "%s: Service %s has no port %s", what, svc.GetName(), name)
	}

	for _, o := range objs {
		what := fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
		switch o.GetKind() {
		case "ServiceMonitor":
			target := nsOf(o)
			if names, ok, _ := unstructured.NestedStringSlice(o.Object, "spec", "namespaceSelector", "matchNames"); ok {
				require.Len(t, names, 1, what)
				target = names[0]
			}
			selector, _, _ := unstructured.NestedMap(o.Object, "spec", "selector", "matchLabels")
			svcs := services(target, selector)
			require.Len(t, svcs, 1, "%s selects one Service", what)
			endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			require.NotEmpty(t, endpoints, what)
			for _, e := range endpoints {
				e := e.(map[string]any)
				servicePort(svcs[0], e["port"].(string), what)
				require.Equal(t, "/metrics", e["path"], what)
				component := svcs[0].GetLabels()["app.kubernetes.io/component"]
				require.Equal(t, []any{map[string]any{"targetLabel": "job", "replacement": "arcflow-" + component}}, e["relabelings"],
					"%s: the job label the alert rules select", what)
			}
		case "Ingress":
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			require.NotEmpty(t, rules, what)
			for _, r := range rules {
				paths, _, _ := unstructured.NestedSlice(r.(map[string]any), "http", "paths")
				require.NotEmpty(t, paths, what)
				for _, p := range paths {
					svc, _, _ := unstructured.NestedMap(p.(map[string]any), "backend", "service")
					backend := find(objs, "Service", svc["name"].(string))
					require.NotNil(t, backend, "%s: backend Service %v", what, svc["name"])
					servicePort(backend, svc["port"].(map[string]any)["name"].(string), what)
				}
			}
		case "NetworkPolicy":
			types, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "policyTypes")
			require.Equal(t, []string{"Ingress"}, types, "%s leaves egress open", what)
			selector, _, _ := unstructured.NestedMap(o.Object, "spec", "podSelector", "matchLabels")
			d := podsOf(nsOf(o), selector, what)
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "ingress")
			require.NotEmpty(t, rules, what)
			for _, r := range rules {
				r := r.(map[string]any)
				require.NotEmpty(t, r["from"], "%s: an empty from would admit everyone", what)
				for _, p := range r["ports"].([]any) {
					requireContainerPort(d, p.(map[string]any)["port"], what)
				}
			}
		case "ConfigMap":
			require.Equal(t, "1", o.GetLabels()["grafana_dashboard"], what)
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			require.Equal(t, string(monitoring.DashboardFile()), data["arcflow-dashboard.json"], "%s holds deploy/monitoring/arcflow-dashboard.json", what)
		}
	}
}

// matches: every label of the selector is among labels.
func matches(selector map[string]any, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func nested(t *testing.T, o *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, ok, err := unstructured.NestedString(o.Object, path...)
	require.True(t, ok && err == nil, "%s %s: %v", o.GetKind(), o.GetName(), path)
	return v
}

func ingressPaths(t *testing.T, rule any) []string {
	t.Helper()
	paths, _, _ := unstructured.NestedSlice(rule.(map[string]any), "http", "paths")
	var out []string
	for _, p := range paths {
		p := p.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v", p["pathType"], p["path"]))
	}
	sort.Strings(out)
	return out
}

func ruleList(t *testing.T, o *unstructured.Unstructured) []map[string]any {
	t.Helper()
	require.NotNil(t, o, "a PrometheusRule")
	groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
	var out []map[string]any
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			out = append(out, r.(map[string]any))
		}
	}
	return out
}

func alertNames(t *testing.T, o *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, r := range ruleList(t, o) {
		out = append(out, r["alert"].(string))
	}
	return out
}

func ruleExpr(t *testing.T, o *unstructured.Unstructured, alert string) string {
	t.Helper()
	for _, r := range ruleList(t, o) {
		if r["alert"] == alert {
			return r["expr"].(string)
		}
	}
	require.Failf(t, "no such alert", alert)
	return ""
}
