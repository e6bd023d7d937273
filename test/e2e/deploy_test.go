package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/localstack"
)

// The kustomize base applies cleanly to the real API server: every object passes
// admission, schema and RBAC validation (a server-side dry run).
func TestKustomizeBaseAppliesToTheAPIServer(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	// A dry run does not create the namespace its objects live in.
	_, _ = stack.Kubectl(ctx, "create", "namespace", "arcflow-system")
	out, err := stack.Kubectl(ctx, "apply", "--server-side", "--dry-run=server", "-k", filepath.Join(repoRoot(t), "deploy", "kustomize", "base"))
	require.NoError(t, err, out)
	for _, object := range []string{
		"customresourcedefinition.apiextensions.k8s.io/runnerdeployments.actions.summerwind.dev",
		"serviceaccount/arcflow-worker", "clusterrole.rbac.authorization.k8s.io/arcflow-worker",
		"role.rbac.authorization.k8s.io/arcflow-leader-election",
		"deployment.apps/arcflow-worker", "deployment.apps/arcflow-webhook", "service/arcflow-webhook",
		"poddisruptionbudget.policy/arcflow-worker", "poddisruptionbudget.policy/arcflow-webhook",
		"validatingadmissionpolicy.admissionregistration.k8s.io/arcflow-runner-pods",
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/arcflow-runner-pods",
	} {
		require.Contains(t, out, object+" serverside-applied (server dry run)")
	}
	require.Equal(t, 19, strings.Count(out, "(server dry run)"), out)
}

// The Helm chart lints, renders with the helm binary (built from its Go module by
// make tools), and what it renders applies cleanly to the real API server.
func TestHelmChartRendersAndApplies(t *testing.T) {
	parallel(t)
	ctx := testContext(t)
	tools, err := localstack.ToolsDir()
	require.NoError(t, err)
	helm := filepath.Join(tools, "helm")
	chart := chartDir(t)
	out, err := exec.CommandContext(ctx, helm, "lint", chart).CombinedOutput()
	require.NoError(t, err, string(out))

	_, _ = stack.Kubectl(ctx, "create", "namespace", "arcflow-helm")
	for name, values := range map[string][]string{
		"defaults": nil,
		"everything on": {
			"--set", "authSecret.create=true", "--set", "authSecret.github_app_id=1", "--set", "authSecret.github_app_installation_id=2",
			"--set", "authSecret.github_app_private_key=key", "--set", "githubWebhookServer.secret.create=true",
			"--set", "githubWebhookServer.secret.github_webhook_secret_token=s3cret",
			"--set", "temporal.address=example.tmprl.cloud:7233", "--set", "temporal.tls.enabled=true",
			"--set", "temporal.tls.secretName=temporal-tls", "--set", "temporal.apiKeySecretName=temporal-api-key",
			"--set", "scope.singleNamespace=true", "--set", "runner.image=example/runner:1",
			// ARC's Lease in the release's namespace, so the guard's Role
			// applies with the rest under -n.
			"--set", "arcController.lease=arcflow-helm/actions-runner-controller",
		},
	} {
		args := append([]string{"template", "arcflow", chart, "--namespace", "arcflow-helm", "--include-crds"}, values...)
		rendered, err := exec.CommandContext(ctx, helm, args...).Output()
		require.NoError(t, err, name)
		path := filepath.Join(t.TempDir(), "rendered.yaml")
		require.NoError(t, os.WriteFile(path, rendered, 0o644))
		out, err := stack.Kubectl(ctx, "apply", "--server-side", "--dry-run=server", "-n", "arcflow-helm", "-f", path)
		require.NoError(t, err, "%s: %s", name, out)
		require.Contains(t, out, "deployment.apps/arcflow-worker serverside-applied (server dry run)", name)
		if name == "everything on" {
			require.Contains(t, out, "secret/controller-manager serverside-applied", name)
			require.Contains(t, string(rendered), "--watch-namespace=arcflow-helm")
			require.Contains(t, string(rendered), "TEMPORAL_TLS_CLIENT_CERT_PATH")
		} else {
			require.Contains(t, out, "deployment.apps/arcflow-webhook serverside-applied (server dry run)", name)
			// Two replicas of each part by default, each under a PodDisruptionBudget,
			// and the worker's watchers behind the Lease.
			require.Equal(t, 2, strings.Count(string(rendered), "replicas: 2"), name)
			require.Contains(t, string(rendered), "- --enable-leader-election", name)
			require.Contains(t, out, "poddisruptionbudget.policy/arcflow-worker serverside-applied (server dry run)", name)
			require.Contains(t, out, "poddisruptionbudget.policy/arcflow-webhook serverside-applied (server dry run)", name)
			require.NotContains(t, string(rendered), "kind: Secret", "no Secret unless asked: credentials come from the user's")
		}
	}
}
