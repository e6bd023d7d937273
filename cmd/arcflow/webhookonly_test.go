//go:build !webhookonly

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The webhook server's own build links no workflow code and no typed Kubernetes
// client: that is where its memory saving comes from.
func TestTheWebhookOnlyBuildLinksNoWorker(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "webhookonly", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/arcflow/arcflow/webhook", "the dependency list is real")
	for _, heavy := range []string{
		"k8s.io/client-go/kubernetes", "github.com/arcflow/arcflow/workflows", "github.com/arcflow/arcflow/activities",
		"github.com/arcflow/arcflow/worker", "go.temporal.io/sdk/worker",
	} {
		require.NotContains(t, deps, heavy)
	}
}
