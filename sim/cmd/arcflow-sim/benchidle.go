package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

const idleManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: idle
spec:
  replicas: %d
  template:
    spec:
      repository: idle-org/app
      labels: [linux, idle]
`

// benchIdleRunners holds n idle runners in one pool, so n runner workflows stay
// live in one worker, and reports the worker's memory with its sticky cache as
// set (ARCFLOW_STICKY_WORKFLOW_CACHE_SIZE, default the SDK's 10,000).
func benchIdleRunners(ctx context.Context, s *session, n int) (string, error) {
	const ns = "bench-idle"
	w, err := s.world(ctx, world.Config{Namespace: ns, RegisterDelay: time.Second, Seed: 11})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	serverBase, _ := s.serverUsage()
	start := time.Now()
	if err := w.Apply(ctx, fmt.Sprintf(idleManifest, n)); err != nil {
		return "", err
	}
	if err := waitFor(ctx, 20*time.Minute, fmt.Sprintf("%d idle runners registered", n), func() bool {
		return w.IdleRunners() == n && w.Runners.LivePods() == n
	}); err != nil {
		return "", err
	}
	allIdle := time.Since(start)
	// Held idle: the pool and every runner workflow wait on their signals and
	// timers, as in a quiet hour.
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(30 * time.Second):
	}
	live, err := world.CountRunning(ctx, s.temporal, "runner/"+ns+"/")
	if err != nil {
		return "", err
	}
	server, _ := s.serverUsage()
	// VmHWM is the worker's peak since it started: no sampling needed.
	peakRSS, idleRSS := w.Worker.PeakRSS(), w.Worker.RSS()
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %d idle runners in one pool, one worker (%s)\n\n", n, s.serverName())
	b.WriteString("| Figure | arcflow | target |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| replicas applied → %d runners registered and idle | %s | |\n", n, allIdle.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "| live runner workflows | %d | %d |\n", live, n)
	fmt.Fprintf(&b, "| worker peak RSS (VmHWM) / RSS after 30 s idle | %s / %s | ≤ 512 MiB |\n", mib(peakRSS), mib(idleRSS))
	fmt.Fprintf(&b, "| worker CPU seconds to get there | %.1f | |\n", w.Worker.CPU().Seconds())
	fmt.Fprintf(&b, "| Temporal server CPU seconds to get there; its peak RSS | %.1f; %s | |\n", server.Minus(serverBase).CPU.Seconds(), mib(server.PeakRSS))

	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "rdeploy", "--all", "--wait=false"); err != nil {
		return "", fmt.Errorf("delete the idle pool: %w: %s", err, out)
	}
	return b.String(), waitFor(ctx, 10*time.Minute, "the idle pool to drain after delete", func() bool { return w.Runners.LivePods() == 0 })
}
