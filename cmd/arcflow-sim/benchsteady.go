package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/internal/simworld"
	"github.com/arcflow/arcflow/sim"
)

// steadyInterval paces the steady-rate workload: one job every 3 s.
const steadyInterval = 3 * time.Second

// steadyResult is one steady-rate run with an idle buffer of idle runners.
type steadyResult struct {
	idle    int
	waits   simworld.Percentiles
	idleSec float64 // idle runner-seconds per job: the buffer's price
	pods    int
}

// benchSteady queues jobs one every steadyInterval, once without an idle buffer
// and once with two idle runners (arcflow.dev/idle-runners), and reports job
// queued → started and the idle runner-seconds each job cost.
func benchSteady(ctx context.Context, s *session, jobs int) (string, error) {
	var results []steadyResult
	for _, idle := range []int{0, 2} {
		r, err := steadyRun(ctx, s, jobs, idle)
		if err != nil {
			return "", fmt.Errorf("steady rate, %d idle runners: %w", idle, err)
		}
		results = append(results, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### A steady rate on the %s: %d jobs, one every %v (5 s jobs, runners register 1 s after Running, HRA max 10)\n\n",
		s.serverName(), jobs, steadyInterval)
	b.WriteString("| idle buffer (`arcflow.dev/idle-runners`) | job queued → started, p50 / p95 / p99 | idle runner-seconds per job | runner pods per job |\n|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %d | %s | %.1f | %.2f |\n", r.idle, r.waits, r.idleSec, float64(r.pods)/float64(jobs))
	}
	return b.String(), nil
}

func steadyRun(ctx context.Context, s *session, jobs, idle int) (steadyResult, error) {
	ns := fmt.Sprintf("bench-steady-%d", idle)
	w, err := s.world(ctx, simworld.Config{Namespace: ns, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: uint64(100 + idle)})
	if err != nil {
		return steadyResult{}, err
	}
	defer func() { _ = w.Stop() }()
	manifest := autoscaledPool("steady", "steady-org/app", 10)
	if idle > 0 {
		manifest = simworld.WithIdleRunners(manifest, "steady", idle)
	}
	if err := w.Apply(ctx, manifest); err != nil {
		return steadyResult{}, err
	}
	if err := s.waitAccepted(ctx, ns, "steady"); err != nil {
		return steadyResult{}, err
	}
	if err := waitFor(ctx, 2*time.Minute, fmt.Sprintf("%d idle runners before the first job", idle), func() bool {
		return w.IdleRunners() == idle && w.Runners.LivePods() == idle
	}); err != nil {
		return steadyResult{}, err
	}
	podsBefore := len(w.Runners.PodTimes())

	// Sample the idle runners every 100 ms while the jobs come and run.
	sampling, stopSampling := context.WithCancel(ctx)
	idleSamples := make(chan float64, 1)
	go func() {
		var sum float64
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling.Done():
				idleSamples <- sum
				return
			case <-tick.C:
				sum += float64(w.IdleRunners()) * 0.1
			}
		}
	}()
	workload := sim.Workload{Jobs: jobs, Rate: 1 / steadyInterval.Seconds(), Repositories: []string{"steady-org/app"},
		LabelSets: [][]string{{"self-hosted", "linux", "steady"}}}
	runErr := workload.Run(ctx, w.Queue)
	if runErr == nil {
		runErr = waitFor(ctx, 2*time.Minute, "every steady job done", func() bool {
			done := 0
			for _, j := range w.GitHub.Jobs() {
				if j.Status == "completed" {
					done++
				}
			}
			return done == jobs
		})
	}
	stopSampling()
	idleSum := <-idleSamples
	if runErr != nil {
		return steadyResult{}, runErr
	}
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
	}
	r := steadyResult{idle: idle, waits: simworld.PercentilesOf(waits), idleSec: idleSum / float64(jobs),
		pods: len(w.Runners.PodTimes()) - podsBefore}
	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "hra,rdeploy", "--all"); err != nil {
		return steadyResult{}, fmt.Errorf("delete the steady pool: %w: %s", err, out)
	}
	return r, waitFor(ctx, 2*time.Minute, "the steady pool to drain after delete", func() bool { return w.Runners.LivePods() == 0 })
}
