package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The kustomize base applies cleanly to the real API server: every object passes
// admission, schema and RBAC validation (a server-side dry run).
func TestKustomizeBaseAppliesToTheAPIServer(t *testing.T) {
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
	} {
		require.Contains(t, out, object+" serverside-applied (server dry run)")
	}
	require.Equal(t, 15, strings.Count(out, "(server dry run)"), out)
}
