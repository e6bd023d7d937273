package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
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
			logLeftRunners(t, cfg, w)
		}
	})
	return w
}

// logLeftRunners logs the worker's log and the whole history of each runner
// GitHub still lists after a drain: what its workflow saw and did.
func logLeftRunners(t *testing.T, cfg world.Config, w *world.World) {
	for _, p := range w.Workers {
		out, _ := os.ReadFile(p.LogPath())
		t.Logf("%s log:\n%s", p.Name, out)
	}
	address, namespace := stack.TemporalAddress, cfg.TemporalNamespace
	for _, e := range cfg.Env {
		if a, ok := strings.CutPrefix(e, "TEMPORAL_ADDRESS="); ok {
			address = a
		}
	}
	if namespace == "" {
		namespace = "default"
	}
	tc, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Logf("no Temporal client for the left runners' histories: %v", err)
		return
	}
	defer tc.Close()
	for _, r := range w.GitHub.Runners() {
		id := contract.RunnerWorkflowID(cfg.Namespace, r.Name)
		events, err := world.History(context.Background(), tc, id, "")
		var b strings.Builder
		for _, e := range events {
			fmt.Fprintf(&b, "%s\n", protojson.Format(e))
		}
		t.Logf("%s history (%v):\n%s", id, err, b.String())
	}
}
