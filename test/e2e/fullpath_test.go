package e2e

import (
	"testing"

	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// The whole path on the dev server; test/cluster runs it on a Temporal cluster.

// fullPathRunnerDeployment is applied by cli_test too.
const fullPathRunnerDeployment = fullpath.RunnerDeployment

func TestFullPathRunnerDeploymentFromWebhookToScaleDown(t *testing.T) {
	parallel(t)
	runFullPath(t, "full-rd", fullPathRunnerDeployment, "app")
}

func TestFullPathRunnerSetFromWebhookToScaleDown(t *testing.T) {
	parallel(t)
	runFullPath(t, "full-rs", fullpath.RunnerSet, "builders")
}

func runFullPath(t *testing.T, ns, manifest, name string) {
	fullpath.Run(t, fullpath.Config{
		Stack: stack, RepoRoot: repoRoot(t), Binary: arcflowBinary(t), Namespace: ns, TemporalNamespace: ns, Manifest: manifest, Name: name,
	})
}

func runnerPods(t *testing.T, w *world.World) []string { return fullpath.RunnerPods(t, w) }
