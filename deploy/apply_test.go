package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/localstack"
)

// What the chart renders, with its defaults and with every option on, and the
// kustomize base with every component, applies to a real API server: a
// server-side dry run with strict field validation checks each object against
// the Kubernetes schemas and, with the Prometheus Operator's CRDs installed, each
// ServiceMonitor and PrometheusRule against theirs. Unknown or misplaced fields,
// wrong types and invalid values fail.
func TestManifestsApplyToTheAPIServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	tool(t, "kube-apiserver")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stack, err := localstack.Start(ctx, localstack.Options{Kubernetes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.Stop()) })
	require.NoError(t, stack.InstallCRDs(ctx, "crds"))
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join("testdata", "prometheus-operator-crds")))
	for _, ns := range []string{releaseNS, "arcflow-system", "ci", "arc-system"} {
		out, err := stack.Kubectl(ctx, "create", "namespace", ns)
		require.NoError(t, err, out)
	}
	apply := func(t *testing.T, manifest []byte, args ...string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		require.NoError(t, os.WriteFile(path, manifest, 0o644))
		out, err := stack.Kubectl(ctx, append([]string{"apply", "--server-side", "--dry-run=server", "--validate=strict", "-f", path}, args...)...)
		require.NoError(t, err, out)
		return out
	}
	applied := func(t *testing.T, out string, objects ...string) {
		t.Helper()
		for _, o := range objects {
			require.Contains(t, out, o+" serverside-applied (server dry run)")
		}
	}

	t.Run("chart defaults", func(t *testing.T) {
		out := apply(t, helmTemplate(t), "-n", releaseNS)
		applied(t, out, "deployment.apps/arcflow-worker", "deployment.apps/arcflow-webhook", "service/arcflow-webhook")
		require.NotContains(t, out, "monitoring.coreos.com")
	})
	t.Run("chart with every option", func(t *testing.T) {
		out := apply(t, helmTemplate(t, everythingOn...), "-n", releaseNS)
		applied(t, out, "ingress.networking.k8s.io/arcflow-webhook", "service/arcflow-worker-metrics",
			"servicemonitor.monitoring.coreos.com/arcflow-worker", "servicemonitor.monitoring.coreos.com/arcflow-webhook",
			"servicemonitor.monitoring.coreos.com/arcflow-temporal",
			"prometheusrule.monitoring.coreos.com/arcflow", "configmap/arcflow-dashboard",
			"networkpolicy.networking.k8s.io/arcflow-worker", "networkpolicy.networking.k8s.io/arcflow-webhook")
	})
	t.Run("chart with every tuning value in one namespace behind a LoadBalancer", func(t *testing.T) {
		// The Roles name their namespaces (ci, and arc-system for ARC's Lease),
		// which kubectl refuses beside -n: the objects without one go to default,
		// as helm would put them into the release's.
		out := apply(t, helmTemplate(t, slices.Concat(tuning, []string{
			"--set", "scope.singleNamespace=true", "--set", "scope.watchNamespace=ci",
			"--set", "rbac.allowGrantingKubernetesContainerModePermissions=true",
			"--set", "temporal.address=" + externalTemporal,
			"--set", "temporal.tls.enabled=true", "--set", "temporal.tls.secretName=temporal-client-tls",
			"--set", "temporal.tls.ca.configMapName=temporal-ca",
			"--set", "githubWebhookServer.service.type=LoadBalancer",
			"--set", "githubWebhookServer.service.loadBalancerSourceRanges[0]=192.30.252.0/22",
			"--set", "githubWebhookServer.service.annotations.example\\.org/tls=yes",
		})...))
		applied(t, out, "deployment.apps/arcflow-worker", "deployment.apps/arcflow-webhook", "service/arcflow-webhook",
			"role.rbac.authorization.k8s.io/arcflow-worker", "role.rbac.authorization.k8s.io/arcflow-worker-arc-controller",
			"rolebinding.rbac.authorization.k8s.io/arcflow-webhook")
		require.NotContains(t, out, "clusterrole")
	})
	t.Run("chart with monitoring objects elsewhere", func(t *testing.T) {
		// The objects name their namespace, so no -n (the worker's metrics Service
		// goes to default).
		out := apply(t, helmTemplate(t, "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.namespace=arcflow-system",
			"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.prometheusRule.namespace=arcflow-system",
			"--set", "grafana.dashboard.enabled=true", "--set", "grafana.dashboard.namespace=arcflow-system",
			"--show-only", "templates/servicemonitor.yaml", "--show-only", "templates/prometheusrule.yaml", "--show-only", "templates/dashboard.yaml"))
		require.Equal(t, 6, strings.Count(out, "(server dry run)"), out) // a Service, three ServiceMonitors, the rules, the dashboard
	})
	t.Run("every arcflow pod passes Pod Security restricted", func(t *testing.T) { testPodSecurityRestricted(t, ctx, stack) })
	// The dry run is strict: each of these breaks a schema, and each is refused.
	t.Run("schema errors are refused", func(t *testing.T) {
		for name, c := range map[string]struct{ from, to, want string }{
			"unknown ServiceMonitor field": {"      path: /metrics\n", "      path: /metrics\n      scrapeEvery: 30s\n", ".spec.endpoints[0].scrapeEvery: field not declared in schema"},
			"bad rule duration":            {"          for: 5m\n", "          for: 5 minutes\n", "spec.groups[0].rules[0].for"},
			"bad Ingress pathType":         {"pathType: Exact", "pathType: Sometimes", "pathType"},
			"bad NetworkPolicy port":       {"port: metrics}", "port: metrics_and_more}", "spec.ingress[0].ports[0].port"},
		} {
			manifest := string(helmTemplate(t, everythingOn...))
			require.Contains(t, manifest, c.from, name)
			path := filepath.Join(t.TempDir(), "manifest.yaml")
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(manifest, c.from, c.to, 1)), 0o644))
			out, err := stack.Kubectl(ctx, "apply", "--server-side", "--dry-run=server", "--validate=strict", "-n", releaseNS, "-f", path)
			require.Error(t, err, name)
			require.Contains(t, out, c.want, name)
		}
	})
	// docs/install.md upgrades the worker before the webhook with a selector:
	// the first apply takes everything but the webhook's objects, the CRDs and
	// RBAC, which have no component label, among them.
	t.Run("kustomize upgrade with the worker first", func(t *testing.T) {
		out, err := stack.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "--dry-run=server",
			"-k", overlay(t, "ingress"), "-l", "app.kubernetes.io/component!=webhook")
		require.NoError(t, err, out)
		applied(t, out, "deployment.apps/arcflow-worker", "clusterrole.rbac.authorization.k8s.io/arcflow-worker",
			"customresourcedefinition.apiextensions.k8s.io/runnerdeployments.actions.summerwind.dev")
		for _, webhook := range []string{"deployment.apps/arcflow-webhook", "service/arcflow-webhook", "ingress.networking.k8s.io/arcflow-webhook"} {
			require.NotContains(t, out, webhook)
		}
	})
	t.Run("kustomize base with every component", func(t *testing.T) {
		out := apply(t, kustomizeBuild(t, overlay(t, "ingress", "servicemonitor", "prometheusrule", "networkpolicy", "dashboard")))
		applied(t, out, "ingress.networking.k8s.io/arcflow-webhook", "service/arcflow-worker-metrics",
			"servicemonitor.monitoring.coreos.com/arcflow-worker", "servicemonitor.monitoring.coreos.com/arcflow-webhook",
			"prometheusrule.monitoring.coreos.com/arcflow", "configmap/arcflow-dashboard",
			"networkpolicy.networking.k8s.io/arcflow-worker", "networkpolicy.networking.k8s.io/arcflow-webhook",
			"validatingadmissionpolicy.admissionregistration.k8s.io/arcflow-runner-pods",
			"validatingadmissionpolicybinding.admissionregistration.k8s.io/arcflow-runner-pods")
		require.Equal(t, 19+8, strings.Count(out, "(server dry run)"), out)
	})
}
