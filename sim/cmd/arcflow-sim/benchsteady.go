package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/world"
)

// steadyInterval paces the steady-rate workload: one job every 3 s.
const steadyInterval = 3 * time.Second

// steadyVariant is how the steady pool registers and buffers its runners.
type steadyVariant struct {
	idle int  // arcflow.dev/idle-runners
	jit  bool // arcflow.dev/jit-config
}

func (v steadyVariant) String() string {
	registration := "token"
	if v.jit {
		registration = "JIT"
	}
	return fmt.Sprintf("%d | %s", v.idle, registration)
}

// steadyResult is one steady-rate run of a variant.
type steadyResult struct {
	steadyVariant
	waits   world.Percentiles
	idleSec float64 // idle runner-seconds per job: the buffer's price
	pods    int
	// calls counts the GitHub calls of the run by endpoint, from the fake's log.
	calls map[string]int
}

// benchSteady queues jobs one every steadyInterval: without an idle buffer, with
// two idle runners (arcflow.dev/idle-runners), and with JIT runners
// (arcflow.dev/jit-config). It reports job queued → started, the idle
// runner-seconds each job cost, and the GitHub calls each job cost.
func benchSteady(ctx context.Context, s *session, jobs int) (string, error) {
	var results []steadyResult
	for _, v := range []steadyVariant{{idle: 0}, {idle: 2}, {idle: 0, jit: true}} {
		r, err := steadyRun(ctx, s, jobs, v)
		if err != nil {
			return "", fmt.Errorf("steady rate, %v: %w", v, err)
		}
		results = append(results, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### A steady rate on the %s: %d jobs, one every %v (5 s jobs, runners register 1 s after Running, HRA max 10)\n\n",
		s.serverName(), jobs, steadyInterval)
	b.WriteString("| idle buffer | registration | job queued → started, p50 / p95 / p99 | idle runner-seconds per job | runner pods per job | GitHub calls per job | of which registration (token, JIT) / runner lookups |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		total := 0
		for _, n := range r.calls {
			total += n
		}
		perJob := func(n int) float64 { return float64(n) / float64(jobs) }
		fmt.Fprintf(&b, "| %v | %s | %.1f | %.2f | %.2f | %.2f / %.2f |\n", r.steadyVariant, r.waits, r.idleSec, perJob(r.pods), perJob(total),
			perJob(r.calls[registrationEndpoint]+r.calls[jitEndpoint]), perJob(r.calls[listRunnersEndpoint]))
	}
	b.WriteString("\nThe fake GitHub serves every call; the simulated runner takes as long to come online from a JIT configuration as from a token (1 s), so the JIT row's wait differs only by what arcflow does.\n")
	return b.String(), nil
}

// The fake GitHub's route patterns of the calls that register or find runners.
const (
	registrationEndpoint = "POST /repos/{owner}/{repo}/actions/runners/registration-token"
	jitEndpoint          = "POST /repos/{owner}/{repo}/actions/runners/generate-jitconfig"
	listRunnersEndpoint  = "GET /repos/{owner}/{repo}/actions/runners"
)

func steadyRun(ctx context.Context, s *session, jobs int, v steadyVariant) (steadyResult, error) {
	ns := fmt.Sprintf("bench-steady-%d", v.idle)
	if v.jit {
		ns += "-jit"
	}
	w, err := s.world(ctx, world.Config{Namespace: ns, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: uint64(100 + v.idle)})
	if err != nil {
		return steadyResult{}, err
	}
	defer func() { _ = w.Stop() }()
	manifest := autoscaledPool("steady", "steady-org/app", 10)
	if v.idle > 0 {
		manifest = world.WithIdleRunners(manifest, "steady", v.idle)
	}
	if v.jit {
		manifest = world.WithJITConfig(manifest, "steady")
	}
	if err := w.Apply(ctx, manifest); err != nil {
		return steadyResult{}, err
	}
	if err := s.waitAccepted(ctx, ns, "steady"); err != nil {
		return steadyResult{}, err
	}
	if err := waitFor(ctx, 2*time.Minute, fmt.Sprintf("%d idle runners before the first job", v.idle), func() bool {
		return w.IdleRunners() == v.idle && w.Runners.LivePods() == v.idle
	}); err != nil {
		return steadyResult{}, err
	}
	podsBefore := len(w.Runners.PodTimes())
	w.GitHub.ResetCalls()

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
	r := steadyResult{steadyVariant: v, waits: world.PercentilesOf(waits), idleSec: idleSum / float64(jobs),
		pods: len(w.Runners.PodTimes()) - podsBefore, calls: w.GitHub.CallCounts()}
	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "hra,rdeploy", "--all", "--wait=false"); err != nil {
		return steadyResult{}, fmt.Errorf("delete the steady pool: %w: %s", err, out)
	}
	return r, waitFor(ctx, 2*time.Minute, "the steady pool to drain after delete", func() bool { return w.Runners.LivePods() == 0 })
}
