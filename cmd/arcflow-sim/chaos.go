package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arcflow/arcflow/internal/simworld"
	"github.com/arcflow/arcflow/sim"
)

const chaosManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: chaos
spec:
  replicas: 0
  template:
    spec:
      repository: chaos-org/app
      labels: [linux, chaos]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: chaos
spec:
  scaleTargetRef:
    name: chaos
  minReplicas: 0
  maxReplicas: %d
  scaleDownDelaySecondsAfterScaleOut: 30
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

// runChaos is `make chaos`: the workload while the worker and the webhook are
// killed with SIGKILL and restarted, with duplicated and reordered deliveries.
func runChaos(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	dir := fs.String("dir", ".chaos", "directory for the stack's state, logs and results")
	jobs := fs.Int("jobs", 120, "jobs to queue")
	rate := fs.Float64("rate", 1, "jobs queued per second")
	maxRunners := fs.Int("max-runners", 10, "the HRA's maxReplicas")
	workerEvery := fs.Duration("kill-worker-every", 20*time.Second, "mean time between worker kills")
	webhookEvery := fs.Duration("kill-webhook-every", 30*time.Second, "mean time between webhook kills")
	workers := fs.Int("workers", 1, "arcflow worker replicas; the first is killed, the others go on (their leader election hands the watchers over)")
	duplicate := fs.Float64("duplicate", 0.3, "share of deliveries sent twice")
	reorder := fs.Float64("reorder", 0.1, "share of deliveries held back behind the next one")
	_ = fs.Parse(args)

	s, err := startSession(ctx, *dir, false)
	if err != nil {
		return err
	}
	defer s.close()
	const ns = "chaos"
	w, err := s.world(ctx, simworld.Config{
		Namespace: ns, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: 3, Workers: *workers,
		Duplicate: *duplicate, Reorder: *reorder,
		// Deliveries sent while the webhook is down are lost, as on GitHub; the
		// missed-webhook reconcile finds their jobs.
		Env: []string{"ARCFLOW_RECONCILE_PERIOD=15s"},
	})
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	if err := w.Apply(ctx, fmt.Sprintf(chaosManifest, *maxRunners)); err != nil {
		return err
	}
	if err := s.waitAccepted(ctx, ns, "chaos"); err != nil {
		return err
	}

	step(fmt.Sprintf("%d jobs at %.1f/s; SIGKILL the worker about every %s and the webhook about every %s", *jobs, *rate, *workerEvery, *webhookEvery))
	start := time.Now()
	chaosCtx, stopChaos := context.WithCancel(ctx)
	kills := make(chan string, 100)
	go killer(chaosCtx, w.Worker, *workerEvery, 1, kills)
	go killer(chaosCtx, w.Webhook, *webhookEvery, 2, kills)
	go func() {
		_ = sim.Workload{Jobs: *jobs, Rate: *rate, Repositories: []string{"chaos-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "chaos"}}}.Run(ctx, w.Queue)
	}()
	live := newProgressLine(os.Stdout)
	err = waitFor(ctx, 20*time.Minute, "every job to complete", func() bool {
		line, done := progress(w, *jobs)
		live.show(fmt.Sprintf("%s kills: worker %d webhook %d", line, w.Worker.Restarts(), w.Webhook.Restarts()))
		return done
	})
	live.end()
	stopChaos()
	if err != nil {
		return err
	}
	allDone := time.Since(start)
	for _, p := range append([]*simworld.Process{w.Webhook}, w.Workers...) {
		if !p.Running() {
			return fmt.Errorf("%s is not running: it did not come back after its last kill, or died", p.Name)
		}
	}
	step("draining: waiting for the scale-down delay and the last runners to go")
	drainStart := time.Now()
	drainErr := waitFor(ctx, 5*time.Minute, "no runner pod and no registered runner", func() bool {
		return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0
	})
	drained := time.Since(drainStart)

	failed := 0
	for _, j := range w.GitHub.Jobs() {
		if j.Conclusion != "success" {
			failed++
		}
	}
	stats := w.Sender.Stats()
	orphans := fmt.Sprintf("%d pods, %d runners", w.Runners.LivePods(), len(w.GitHub.Runners()))
	checks := []struct {
		name string
		ok   bool
		got  string
	}{
		{"every job completed", failed == 0, fmt.Sprintf("%d of %d succeeded", *jobs-failed, *jobs)},
		{"no pod deleted while its runner was busy", len(w.Runners.Violations()) == 0, strings.Join(append([]string{fmt.Sprint(len(w.Runners.Violations()))}, w.Runners.Violations()...), "; ")},
		{"no job interrupted", w.Runners.Interrupted() == 0, fmt.Sprint(w.Runners.Interrupted())},
		{"no orphan pod or registered runner after the drain", drainErr == nil, orphans},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Chaos: %d jobs at %.1f/s, HRA max %d; %d worker replica(s), the first SIGKILLed about every %s, webhook about every %s; %.0f %% duplicated, %.0f %% reordered deliveries\n\n",
		*jobs, *rate, *maxRunners, *workers, *workerEvery, *webhookEvery, *duplicate*100, *reorder*100)
	b.WriteString("| Check | Result | Pass |\n|---|---|---|\n")
	pass := true
	for _, c := range checks {
		fmt.Fprintf(&b, "| %s | %s | %v |\n", c.name, c.got, c.ok)
		pass = pass && c.ok
	}
	b.WriteString("\n| Figure | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| worker kills / webhook kills | %d / %d |\n", w.Worker.Restarts(), w.Webhook.Restarts())
	fmt.Fprintf(&b, "| deliveries: events, posted, accepted, failed (webhook down), duplicated, reordered | %d, %d, %d, %d, %d, %d |\n",
		stats.Events, stats.Posted, stats.Accepted, stats.Failed, stats.Duplicated, stats.Reordered)
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
	}
	fmt.Fprintf(&b, "| job queued → started, p50 / p95 / p99 | %s |\n", simworld.PercentilesOf(waits))
	fmt.Fprintf(&b, "| runner pods created per job | %.2f |\n", float64(len(w.Runners.PodTimes()))/float64(*jobs))
	fmt.Fprintf(&b, "| all jobs done after / drained after | %s / %s |\n", allDone.Round(time.Second), drained.Round(time.Second))
	fmt.Print(b.String())
	if err := writeReport(filepath.Join(s.dir, "results.md"), "chaos run", b.String()); err != nil {
		return err
	}
	if !pass {
		return fmt.Errorf("chaos checks failed; logs in %s", s.dir)
	}
	return nil
}

// killer SIGKILLs and restarts p at random intervals around every.
func killer(ctx context.Context, p *simworld.Process, every time.Duration, seed uint64, kills chan<- string) {
	rng := rand.New(rand.NewPCG(seed, seed))
	for {
		wait := every/2 + time.Duration(rng.Int64N(int64(every)))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := p.Restart(); err != nil {
			kills <- fmt.Sprintf("%s did not restart: %v", p.Name, err)
			return
		}
	}
}
