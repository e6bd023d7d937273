package deploy_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arcflow/arcflow/workflows/contract"
)

// externalTemporal is a Temporal the chart does not run.
const externalTemporal = "temporal-frontend.temporal:7233"

// temporalContainer is the bundled Temporal's container of a render.
func temporalContainer(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	sts := find(objs, "StatefulSet", "arcflow-temporal")
	require.NotNil(t, sts, "the bundled Temporal's StatefulSet")
	containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
	require.Len(t, containers, 1)
	return containers[0].(map[string]any)
}

// With no temporal.address, the release runs its own Temporal and both
// Deployments connect to it, in the namespace it creates at start.
func TestChartBundlesTemporalByDefault(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t))
	requireWired(t, objs, releaseNS)
	for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
		ctr := container(t, objs, d)
		require.Equal(t, "arcflow-temporal:7233", env(t, ctr, "TEMPORAL_ADDRESS")["value"], d)
		require.Equal(t, "arcflow", env(t, ctr, "TEMPORAL_NAMESPACE")["value"], d)
	}

	sts := find(objs, "StatefulSet", "arcflow-temporal")
	replicas, _, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "replicas")
	require.EqualValues(t, 1, replicas, "one server: SQLite is never opened by two")
	claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	require.Len(t, claims, 1)
	claim := claims[0].(map[string]any)
	require.Equal(t, "data", claim["metadata"].(map[string]any)["name"])
	require.Equal(t, []any{"ReadWriteOnce"}, claim["spec"].(map[string]any)["accessModes"])
	require.NotContains(t, claim["spec"], "storageClassName", "the cluster's default class")

	ctr := temporalContainer(t, objs)
	require.Equal(t, "ghcr.io/arcflow/arcflow-temporal:v1.5.1", ctr["image"])
	require.Equal(t, []any{"temporal"}, ctr["command"])
	args := args(ctr)
	require.Equal(t, []string{"server", "start-dev"}, args[:2])
	require.Equal(t, "0.0.0.0", lastFlag(t, args, "ip"))
	require.Equal(t, "7233", lastFlag(t, args, "port"))
	require.Equal(t, "8233", lastFlag(t, args, "ui-port"))
	require.Equal(t, "9233", lastFlag(t, args, "metrics-port"), "the server's Prometheus metrics")
	require.Equal(t, "arcflow", lastFlag(t, args, "namespace"))
	require.Equal(t, []string{"journal_mode=wal", "synchronous=normal"}, flagValues(args, "sqlite-pragma"))
	require.NotContains(t, args, "--headless", "the Web UI is served")
	db := lastFlag(t, args, "db-filename")
	require.Contains(t, ctr["volumeMounts"], map[string]any{"name": "data", "mountPath": "/var/lib/temporal"}, "the SQLite file is on the claim")
	require.True(t, strings.HasPrefix(db, "/var/lib/temporal/"), db)

	sec := ctr["securityContext"].(map[string]any)
	require.Equal(t, true, sec["readOnlyRootFilesystem"])
	require.Equal(t, false, sec["allowPrivilegeEscalation"])
	podSec, _, _ := unstructured.NestedMap(sts.Object, "spec", "template", "spec", "securityContext")
	require.EqualValues(t, 65532, podSec["runAsUser"])
	require.EqualValues(t, 65532, podSec["fsGroup"], "the claim is writable by nonroot")
	require.Equal(t, true, podSec["runAsNonRoot"])
	limits, _, _ := unstructured.NestedStringMap(ctr, "resources", "limits")
	require.Equal(t, map[string]string{"cpu": "1", "memory": "1Gi"}, limits)
	probe, _, _ := unstructured.NestedMap(ctr, "readinessProbe", "grpc")
	require.EqualValues(t, 7233, probe["port"], "the frontend's gRPC health")

	np := find(objs, "NetworkPolicy", "arcflow-temporal")
	require.NotNil(t, np)
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	require.Len(t, rules, 2, "the frontend and the metrics port only; no way to the Web UI but port-forward")
	require.Equal(t, []any{map[string]any{"protocol": "TCP", "port": "metrics"}}, rules[1].(map[string]any)["ports"])
	scraper := rules[1].(map[string]any)["from"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "prometheus"}}, scraper["podSelector"], "Prometheus, as for the worker's metrics")
	require.Contains(t, scraper, "namespaceSelector", "Prometheus's namespace, not every namespace")
	rule := rules[0].(map[string]any)
	require.Equal(t, []any{map[string]any{"protocol": "TCP", "port": "grpc"}}, rule["ports"])
	peers := rule["from"].([]any)
	require.Len(t, peers, 1)
	selector := peers[0].(map[string]any)["podSelector"].(map[string]any)
	require.Equal(t, map[string]any{"app.kubernetes.io/instance": release}, selector["matchLabels"])
	require.Equal(t, []any{map[string]any{"key": "app.kubernetes.io/component", "operator": "In", "values": []any{"worker", "webhook"}}},
		selector["matchExpressions"], "this release's worker and webhook pods")
	require.Nil(t, find(objs, "Ingress", "arcflow-temporal-ui"), "the Web UI's Ingress is off by default")
}

// The bundled Temporal registers exactly the search attributes `arcflow setup`
// registers on an external one, with the same types.
func TestChartSearchAttributesAreArcflowSetups(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, v := range flagValues(args(temporalContainer(t, objects(t, helmTemplate(t)))), "search-attribute") {
		name, typ, ok := strings.Cut(v, "=")
		require.True(t, ok, v)
		require.NotContains(t, got, name, "registered once")
		got[name] = typ
	}
	require.Equal(t, contract.SearchAttributeTypes(), got,
		"deploy/helm/arcflow/templates/_temporal.tpl's arcflow.searchAttributes against workflows/contract")
}

// An external address renders no Temporal object; the Deployments connect to it.
func TestChartWithAnExternalTemporalRendersNoTemporal(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t, "--set", "temporal.address="+externalTemporal,
		"--set", "temporal.bundled.ui.ingress.enabled=true", "--set", "networkPolicy.enabled=true"))
	for _, o := range objs {
		require.NotEqual(t, "temporal", o.GetLabels()["app.kubernetes.io/component"], "%s %s", o.GetKind(), o.GetName())
		require.NotContains(t, o.GetName(), "temporal", "%s %s", o.GetKind(), o.GetName())
	}
	require.Zero(t, kinds(objs)["StatefulSet"])
	require.Zero(t, kinds(objs)["PersistentVolumeClaim"])
	for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
		ctr := container(t, objs, d)
		require.Equal(t, externalTemporal, env(t, ctr, "TEMPORAL_ADDRESS")["value"], d)
		require.Equal(t, "default", env(t, ctr, "TEMPORAL_NAMESPACE")["value"], d)
	}
	rules := objects(t, helmTemplate(t, "--set", "temporal.address="+externalTemporal, "--set", "metrics.prometheusRule.enabled=true"))
	require.NotContains(t, alertNames(t, find(rules, "PrometheusRule", "arcflow")), "ArcflowTemporalDown", "nothing bundled to be down")
	ns := objects(t, helmTemplate(t, "--set", "temporal.address="+externalTemporal, "--set", "temporal.namespace=ci"))
	require.Equal(t, "ci", env(t, container(t, ns, "arcflow-worker"), "TEMPORAL_NAMESPACE")["value"])
}

// The Web UI's Ingress, when turned on, reaches the UI port, and the
// NetworkPolicy admits the ingress controller to that port only.
func TestChartTemporalUIIngress(t *testing.T) {
	t.Parallel()
	objs := objects(t, helmTemplate(t, "--set", "temporal.bundled.ui.ingress.enabled=true",
		"--set", "temporal.bundled.ui.ingress.host=temporal.example.org", "--set", "temporal.bundled.ui.ingress.ingressClassName=nginx",
		"--set", "temporal.bundled.persistence.storageClass=fast", "--set", "temporal.bundled.persistence.size=20Gi",
		"--set", "temporal.namespace=ci"))
	requireWired(t, objs, releaseNS)
	ing := find(objs, "Ingress", "arcflow-temporal-ui")
	require.NotNil(t, ing)
	require.Equal(t, "nginx", nested(t, ing, "spec", "ingressClassName"))
	np := find(objs, "NetworkPolicy", "arcflow-temporal")
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	require.Len(t, rules, 3)
	require.Equal(t, []any{map[string]any{"protocol": "TCP", "port": "ui"}}, rules[2].(map[string]any)["ports"])
	peer := rules[2].(map[string]any)["from"].([]any)[0].(map[string]any)
	require.Contains(t, peer, "namespaceSelector", "the ingress controller's namespace, not every namespace")

	sts := find(objs, "StatefulSet", "arcflow-temporal")
	claims, _, _ := unstructured.NestedSlice(sts.Object, "spec", "volumeClaimTemplates")
	spec := claims[0].(map[string]any)["spec"].(map[string]any)
	require.Equal(t, "fast", spec["storageClassName"])
	require.Equal(t, "20Gi", spec["resources"].(map[string]any)["requests"].(map[string]any)["storage"])
	require.Equal(t, "ci", lastFlag(t, args(temporalContainer(t, objs)), "namespace"))
	require.Equal(t, "ci", env(t, container(t, objs, "arcflow-webhook"), "TEMPORAL_NAMESPACE")["value"])

	noPolicy := objects(t, helmTemplate(t, "--set", "temporal.bundled.networkPolicy.enabled=false"))
	require.Nil(t, find(noPolicy, "NetworkPolicy", "arcflow-temporal"))
	dflt := objects(t, helmTemplate(t, "--set", "temporal.namespace=default"))
	require.Empty(t, flagValues(args(temporalContainer(t, dflt)), "namespace"), "the dev server always creates default")
}

// TLS and API keys connect to an external Temporal; with the bundled one they
// are a mistake the render names.
func TestChartBundledTemporalRefusesConnectionSettings(t *testing.T) {
	t.Parallel()
	for _, set := range []string{"temporal.tls.enabled=true", "temporal.apiKeySecretName=key", "temporal.tls.ca.secretName=ca"} {
		out, err := exec.Command(tool(t, "helm"), "template", release, chartDir, "--set", set).CombinedOutput()
		require.Error(t, err, set)
		require.Contains(t, string(out), "set temporal.address too", set)
	}
}
