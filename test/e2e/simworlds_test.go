package e2e

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// startSimWorld runs the built arcflow on the simulator in its own namespace
// (cfg.Namespace; its Temporal namespace is named the same unless
// cfg.TemporalNamespace says otherwise), with warnings logged, and on cleanup deletes its resources and
// waits until every runner pod and registered runner is gone.
func startSimWorld(t *testing.T, ctx context.Context, cfg world.Config) *world.World {
	t.Helper()
	if cfg.TemporalNamespace == "" && !slices.ContainsFunc(cfg.Env, func(e string) bool { return strings.HasPrefix(e, "TEMPORAL_ADDRESS=") }) {
		// On the shared server, unless the test brings a Temporal of its own.
		cfg.TemporalNamespace = cfg.Namespace
		useTemporalNamespace(t, ctx, cfg.TemporalNamespace)
	}
	cfg.Stack, cfg.RepoRoot, cfg.Dir, cfg.Binary = stack, repoRoot(t), t.TempDir(), arcflowBinary(t)
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	w, err := world.Start(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		// The processes stop even when the drain check fails.
		defer func() { require.NoError(t, w.Stop()) }()
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", cfg.Namespace, "hra,rdeploy", "--all", "--wait=false")
		if !assert.Eventually(t, func() bool { return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0 },
			90*time.Second, 200*time.Millisecond, "the pool drained after delete") {
			pods, _ := stack.Kubectl(context.Background(), "get", "pods", "-n", cfg.Namespace, "-o", "wide", "--show-labels")
			t.Logf("left after delete: %d live pods, GitHub runners %+v; pods:\n%s", w.Runners.LivePods(), w.GitHub.Runners(), pods)
		}
	})
	return w
}
