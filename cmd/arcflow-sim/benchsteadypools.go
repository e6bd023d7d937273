package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/internal/simworld"
)

// benchSteadyPools is issue 27's load at full length: jobs arriving
// continuously over ten pools, on runners that register 10 s after their pod
// runs, as production runners do. It prints what users trust an autoscaler
// with (jobs interrupted, busy pods deleted) beside what a steady load costs
// (scale-down stops while a pool had a queued job, pods per job, waits,
// GitHub calls).
func benchSteadyPools(ctx context.Context, s *session, jobs int, rate float64) (string, error) {
	load := simworld.SteadyPools{
		Pools: 10, Repository: "steady-pools-org/app", Rate: rate, Jobs: jobs,
		MinDuration: 2 * time.Second, MaxDuration: 2 * time.Minute,
		MaxReplicas: 20, ScaleDownDelaySeconds: 30, Seed: 27,
	}
	const ns = "bench-steady-pools"
	w, err := s.world(ctx, simworld.Config{Namespace: ns, RegisterDelay: 10 * time.Second, JobDurations: load.JobDuration, Seed: 27})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	if err := w.Apply(ctx, load.Manifest()); err != nil {
		return "", err
	}
	for i := range load.Pools {
		if err := s.waitAccepted(ctx, ns, load.PoolName(i)); err != nil {
			return "", err
		}
	}
	w.GitHub.ResetCalls()
	started := time.Now()
	if err := load.Queue(ctx, w.Queue); err != nil {
		return "", err
	}
	if err := waitFor(ctx, 5*time.Minute, "every job of the steady load done", func() bool {
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" {
				done++
			}
		}
		return done == jobs
	}); err != nil {
		return "", err
	}
	end := time.Now()
	calls := len(w.GitHub.Calls())
	out, err := simworld.MeasureSteady(ctx, s.temporal, w, load, end)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### A steady load over %d pools on the %s: %d jobs at %.1f jobs/s (Poisson), %v-%v each, runners registered 10 s after Running (%v)\n\n",
		load.Pools, s.serverName(), jobs, rate, load.MinDuration, load.MaxDuration, end.Sub(started).Round(time.Second))
	b.WriteString("| figure | arcflow | ARC legacy, same load | before issue 27 |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| jobs interrupted | %d | 0 | 1 |\n", out.Interrupted)
	fmt.Fprintf(&b, "| busy pods deleted | %d | 0 | 1 |\n", len(out.BusyPodsDeleted))
	fmt.Fprintf(&b, "| scale-down stops (while the pool had a queued job) | %d (%d) | n/a | 43 (n/a) |\n", out.Stops, out.StopsWhileQueued)
	fmt.Fprintf(&b, "| runner pods per job | %.2f | n/a | n/a |\n", out.PodsPerJob())
	fmt.Fprintf(&b, "| queued -> started p50 / p95 / p99 | %v | 10.59 / - / 13.26 s at 0.5 jobs/s | 10.12 / - / 16.17 s at 0.5 jobs/s |\n", out.Waits)
	fmt.Fprintf(&b, "| GitHub calls per job | %.2f | 0.28 | 2.43 |\n", float64(calls)/float64(max(jobs, 1)))
	b.WriteString("\nARC's and the earlier figures are from issue 27 and DESIGN.md (the same load shape, 447 jobs at 0.5-2 jobs/s).\n")
	return b.String(), nil
}
