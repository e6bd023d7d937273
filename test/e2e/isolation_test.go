package e2e

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// The tests share one stack and run side by side (t.Parallel), each in a
// world of its own: its Kubernetes namespace, a Temporal namespace of the same
// name (so its workflows, task queue and workers are its own: no test's worker
// takes another's tasks), its own fake GitHub and its own arcflow processes,
// which watch only its namespace. A test that acts on the whole cluster (a
// cluster-scoped object other tests' workers would see, or a worker watching
// every namespace) does not call t.Parallel: Go runs such tests one at a time,
// before the parallel ones start, so it runs alone.

// useTemporalNamespace registers the test's Temporal namespace, named as its
// Kubernetes namespace, on the shared server.
func useTemporalNamespace(t *testing.T, ctx context.Context, namespace string) {
	t.Helper()
	require.NoError(t, stack.AddTemporalNamespace(ctx, namespace), "the test's Temporal namespace")
}

// dialTemporal connects to the shared server in the test's Temporal namespace;
// the client closes with the test.
func dialTemporal(t *testing.T, namespace string) client.Client {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Namespace: namespace, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	return tc
}

// temporalEnv points an arcflow process at the test's Temporal namespace.
func temporalEnv(namespace string) []string {
	return []string{"TEMPORAL_ADDRESS=" + stack.TemporalAddress, "TEMPORAL_NAMESPACE=" + namespace}
}

// temporalCLI runs the temporal CLI in the test's Temporal namespace.
func temporalCLI(ctx context.Context, namespace string, args ...string) (string, error) {
	return stack.Temporal(ctx, append(args, "--namespace", namespace)...)
}
