package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// warmReady is the bench's time to ready: production runners take 10-30 s
// from pod to registered, and every job that finds no idle runner waits it.
const warmReady = 10 * time.Second

// warmResult is one run of one variant at one rate.
type warmResult struct {
	rate    float64
	variant warmVariant
	// jobs arrived in the measured window (after the warm-up).
	jobs  int
	waits world.Percentiles
	// idlePerJob and podsPerJob are over the measured window.
	idlePerJob, podsPerJob float64
	// idleAfter is how many idle runners there were a minute after the last
	// job arrived, and emptyAfter how long after it the last pod went.
	idleAfter  int
	emptyAfter time.Duration
}

// benchWarm runs issue 29's steady rows: the steady load over ten pools
// (world.SteadyPools), runners ready 10 s after their pod runs, HRA
// maxReplicas 100 and a 30 s scale-down delay, at each rate, once per idle
// buffer. Each run's first warmup is not measured, so the rows compare the
// buffers in their steady state; the pools start at zero, as at dawn.
func benchWarm(ctx context.Context, s *session, rates []float64, variants []warmVariant, warmup, measure time.Duration) (string, error) {
	var results []warmResult
	for _, rate := range rates {
		for _, v := range variants {
			step(fmt.Sprintf("warm runners: %.1f jobs/s, idle buffer %v", rate, v))
			r, err := warmRun(ctx, s, rate, v, warmup, measure)
			if err != nil {
				return "", fmt.Errorf("warm runners at %.1f jobs/s, %v: %w", rate, v, err)
			}
			results = append(results, r)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Warm runners (issue 29): a steady load over 10 pools on the %s, runners ready %v after Running, maxReplicas 100, scale-down delay %v; %v of warm-up, then %v measured\n\n",
		s.serverName(), warmReady, warmDelay, warmup, measure)
	b.WriteString("| jobs/s | idle buffer | jobs measured | queued → started p50 / p95 / p99 | idle runner-s per job | runner pods per job | idle runners 1 min after the last job; last pod gone after |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		after := "-"
		if r.variant.auto() {
			after = fmt.Sprintf("%d; %v", r.idleAfter, r.emptyAfter.Round(time.Second))
		}
		fmt.Fprintf(&b, "| %.1f | %v | %d | %v | %.1f | %.2f | %s |\n", r.rate, r.variant, r.jobs, r.waits, r.idlePerJob, r.podsPerJob, after)
	}
	fmt.Fprintf(&b, "\nTargets for auto: p50 ≤ 0.5 s and p99 ≤ %v at every rate; idle runner-s per job ≤ %v at 1 job/s and above; no runner a minute after the last job.\n",
		warmReady, 2*warmReady)
	b.WriteString("Idle runner-seconds and pods are counted from the end of the warm-up to the last arrival, over the jobs that arrived then; the last column is timed from the last arrival (jobs run up to 2 minutes).\n")
	return b.String(), nil
}

// idleSample is how many runners GitHub listed online and not busy, and how
// many runner pods lived, when.
type idleSample struct {
	at         time.Time
	idle, pods int
}

func warmRun(ctx context.Context, s *session, rate float64, variant warmVariant, warmup, measure time.Duration) (warmResult, error) {
	annotation := variant.annotation
	load := world.SteadyPools{
		Pools: 10, Repository: "warm-org/app", Rate: rate, Jobs: int(rate * (warmup + measure).Seconds()),
		MinDuration: 2 * time.Second, MaxDuration: 2 * time.Minute,
		MaxReplicas: 100, ScaleDownDelaySeconds: int(variant.delay.Seconds()), Seed: 29, IdleRunners: annotation,
	}
	ns := fmt.Sprintf("bench-warm-%s-%s", strings.ReplaceAll(fmt.Sprint(rate), ".", "-"), nameSafe(variant.String()))
	w, err := s.world(ctx, world.Config{Namespace: ns, RegisterDelay: warmReady, JobDurations: load.JobDuration, Seed: 29})
	if err != nil {
		return warmResult{}, err
	}
	defer func() { _ = w.Stop() }()
	if err := w.Apply(ctx, load.Manifest()); err != nil {
		return warmResult{}, err
	}
	for i := range load.Pools {
		if err := s.waitAccepted(ctx, ns, load.PoolName(i)); err != nil {
			return warmResult{}, err
		}
	}
	if fixed, _ := strconv.Atoi(annotation); fixed > 0 {
		if err := waitFor(ctx, 3*time.Minute, "the fixed buffers registered", func() bool {
			return w.IdleRunners() == fixed*load.Pools && w.Runners.LivePods() == fixed*load.Pools
		}); err != nil {
			return warmResult{}, err
		}
	}

	var mu sync.Mutex
	var samples []idleSample
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling.Done():
				return
			case now := <-tick.C:
				n, pods := w.IdleRunners(), w.Runners.LivePods()
				mu.Lock()
				samples = append(samples, idleSample{now, n, pods})
				mu.Unlock()
			}
		}
	}()
	from := time.Now().Add(warmup)
	var hra string
	go func() { // the HRAs as kubectl shows them, once the buffers have risen
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(from.Add(measure / 2))):
			out, _ := s.stack.Kubectl(ctx, "get", "hra", "-n", ns)
			warm, _ := s.stack.Kubectl(ctx, "get", "hra", "-n", ns, "-o",
				"custom-columns=NAME:.metadata.name,DESIRED:.status.desiredReplicas,WARM:.status.warm.runners,RATE:.status.warm.arrivalRate,READY:.status.warm.timeToReady")
			mu.Lock()
			hra = out + "\n" + warm
			mu.Unlock()
		}
	}()
	if err := load.Queue(ctx, w.Queue); err != nil {
		return warmResult{}, err
	}
	if err := waitFor(ctx, 10*time.Minute, "every job of the load done", func() bool {
		for _, j := range w.GitHub.Jobs() {
			if j.Status != "completed" {
				return false
			}
		}
		return true
	}); err != nil {
		return warmResult{}, err
	}
	r := warmResult{rate: rate, variant: variant}
	var lastArrival, lastDone, emptied time.Time
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		lastArrival, lastDone = later(lastArrival, j.CreatedAt), later(lastDone, j.CompletedAt)
		if !j.CreatedAt.Before(from) {
			r.jobs++
			waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
		}
	}
	r.waits = world.PercentilesOf(waits)
	pods := 0
	for _, p := range w.Runners.PodTimes() {
		if !p.Created.Before(from) && !p.Created.After(lastArrival) {
			pods++
		}
	}
	if variant.auto() {
		// The buffer rests a scale-down delay after each pool's last job.
		if err := waitFor(ctx, 5*time.Minute, "no runner pod left", func() bool {
			return w.Runners.LivePods() == 0 && time.Since(lastArrival) > time.Minute
		}); err != nil {
			return warmResult{}, err
		}
		emptied = time.Now()
	}
	stopSampling()
	mu.Lock()
	idle := idleSeconds(samples, from, lastArrival)
	if variant.auto() {
		r.idleAfter, r.emptyAfter = idleAt(samples, lastArrival.Add(time.Minute)), emptyAfter(samples, lastArrival)
		if r.emptyAfter < 0 { // the last pod went as the wait above ended, between two samples
			r.emptyAfter = emptied.Sub(lastArrival)
		}
	}
	kubectl := hra
	mu.Unlock()
	r.idlePerJob = idle / float64(max(r.jobs, 1))
	r.podsPerJob = float64(pods) / float64(max(r.jobs, 1))
	if kubectl != "" {
		_ = os.WriteFile(filepath.Join(s.dir, ns+"-hra.txt"), []byte(kubectl), 0o644)
	}
	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "hra,rdeploy", "--all", "--wait=false"); err != nil {
		return warmResult{}, fmt.Errorf("delete the pools: %w: %s", err, out)
	}
	return r, waitFor(ctx, 3*time.Minute, "the pools to drain after delete", func() bool { return w.Runners.LivePods() == 0 })
}

// parseRates reads --warm-rates.
func parseRates(list string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Split(list, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("--warm-rates: %q is not a positive rate", f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// idleSeconds integrates the idle samples taken within [from, to].
func idleSeconds(samples []idleSample, from, to time.Time) float64 {
	var sum float64
	for i := 1; i < len(samples); i++ {
		if samples[i].at.Before(from) || samples[i].at.After(to) {
			continue
		}
		sum += float64(samples[i-1].idle) * samples[i].at.Sub(samples[i-1].at).Seconds()
	}
	return sum
}

// idleAt is the idle runners of the first sample at or after t.
func idleAt(samples []idleSample, t time.Time) int {
	for _, s := range samples {
		if !s.at.Before(t) {
			return s.idle
		}
	}
	return -1
}

// emptyAfter is how long after t the samples first saw no runner pod.
func emptyAfter(samples []idleSample, t time.Time) time.Duration {
	for _, s := range samples {
		if s.at.After(t) && s.pods == 0 {
			return s.at.Sub(t)
		}
	}
	return -1
}

// nameSafe makes a variant's name part of a namespace name.
func nameSafe(name string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name)), "-")
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
