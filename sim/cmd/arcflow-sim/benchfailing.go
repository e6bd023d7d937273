package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// backoffPods is how many runners a pool whose runners all fail at once may
// create in d: the first at once, then one after each backoff step (10 s,
// doubling, at most 10 min).
func backoffPods(d time.Duration) int {
	n, at, step := 1, time.Duration(0), 10*time.Second
	for at+step <= d {
		at += step
		n++
		step = min(2*step, 10*time.Minute)
	}
	return n
}

// benchFailing runs a RunnerDeployment whose runners crash at start for d in
// real time, counts its pods against what the backoff allows, reads its
// RunnersFailing condition, fixes the template and times the recovery.
func benchFailing(ctx context.Context, s *session, d time.Duration) (string, error) {
	const ns = "bench-failing"
	w, err := s.world(ctx, world.Config{Namespace: ns, RegisterDelay: time.Second, Seed: 7})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	if err := w.Apply(ctx, world.CrashingRunners("crashing", "failing-org/app", true)); err != nil {
		return "", err
	}
	if err := waitFor(ctx, time.Minute, "the first crashing pod", func() bool { return len(w.Runners.PodTimes()) > 0 }); err != nil {
		return "", err
	}
	select { // the measurement is what the pool does over this span of real time
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(d):
	}
	pods := len(w.Runners.PodTimes())
	condition, err := s.stack.JSONPath(ctx, ns, "rdeploy", "crashing", `{.status.conditions[?(@.type=="RunnersFailing")].status} {.status.conditions[?(@.type=="RunnersFailing")].reason}: {.status.conditions[?(@.type=="RunnersFailing")].message}`)
	if err != nil {
		return "", fmt.Errorf("read the RunnersFailing condition: %w", err)
	}
	fixed := time.Now()
	if err := w.Apply(ctx, world.CrashingRunners("crashing", "failing-org/app", false)); err != nil {
		return "", err
	}
	if err := waitFor(ctx, 15*time.Minute, "a runner of the fixed template registered", func() bool { return w.IdleRunners() == 1 }); err != nil {
		return "", err
	}
	recovered := time.Since(fixed)
	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "rdeploy", "--all", "--wait=false"); err != nil {
		return "", fmt.Errorf("delete the crashing pool: %w: %s", err, out)
	}
	if err := waitFor(ctx, 2*time.Minute, "the crashing pool to drain", func() bool { return w.Runners.LivePods() == 0 }); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### A runner image that crashes at start, for %v on the %s\n\n", d, s.serverName())
	b.WriteString("| figure | arcflow | ARC legacy |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| runner pods created | %d (the backoff allows %d) | one per failure, as fast as pods fail |\n", pods, backoffPods(d))
	fmt.Fprintf(&b, "| RunnersFailing condition | %s | none |\n", strings.TrimSpace(condition))
	fmt.Fprintf(&b, "| template fixed → its runner registered | %v | |\n", recovered.Round(100*time.Millisecond))
	return b.String(), nil
}
