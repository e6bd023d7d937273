package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// chaosConfig is one `make chaos` run's workload and faults.
type chaosConfig struct {
	jobs, maxRunners, workers, minKills      int
	rate, duplicate, reorder                 float64
	workerEvery, webhookEvery, temporalEvery time.Duration
	// loseStoreAt is when, after the workload starts, Temporal's store is lost
	// (0: never).
	loseStoreAt time.Duration
	// storeKept says why the store is not lost by default, if it is not.
	storeKept string
	baseline  bool
}

// runChaos is `make chaos`: the workload while the Temporal server, a worker and
// the webhook are killed with SIGKILL and restarted, with duplicated and reordered
// deliveries, against the same workload undisturbed.
func runChaos(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	dir := fs.String("dir", ".chaos", "directory for the stack's state, logs and results")
	var c chaosConfig
	fs.IntVar(&c.jobs, "jobs", 120, "jobs to queue")
	fs.Float64Var(&c.rate, "rate", 1, "jobs queued per second")
	fs.IntVar(&c.maxRunners, "max-runners", 10, "the HRA's maxReplicas")
	fs.DurationVar(&c.workerEvery, "kill-worker-every", 20*time.Second, "mean time between worker kills")
	fs.DurationVar(&c.webhookEvery, "kill-webhook-every", 30*time.Second, "mean time between webhook kills")
	fs.DurationVar(&c.temporalEvery, "kill-temporal-every", 30*time.Second, "mean time between Temporal server kills (0: none)")
	fs.IntVar(&c.workers, "workers", 2, "arcflow worker replicas; the first is killed, the others go on (their leader election hands the watchers over)")
	fs.IntVar(&c.minKills, "min-kills", 3, "fail unless each of the Temporal server, the worker and the webhook was killed at least this often")
	fs.Float64Var(&c.duplicate, "duplicate", 0.3, "share of deliveries sent twice")
	fs.Float64Var(&c.reorder, "reorder", 0.1, "share of deliveries held back behind the next one")
	fs.BoolVar(&c.baseline, "baseline", true, "first run the same workload undisturbed and require the same final counts")
	fs.DurationVar(&c.loseStoreAt, "lose-temporal-store-at", 0, "when, after the workload starts, to delete the Temporal dev server's store and start it empty, once (default: half of jobs/rate; 0: never)")
	_ = fs.Parse(args)
	if err := c.defaultLoseStoreAt(fs); err != nil {
		return err
	}

	// Killing an in-memory server would lose every workflow, which no real Temporal
	// does: chaos runs on a durable store (SQLite, or PostgreSQL with TEMPORAL=cluster).
	s, err := startSession(ctx, *dir, sessionOptions{})
	if err != nil {
		return err
	}
	started := readCPUTimes() // the runs, not the builds and the stack's start
	defer s.close()

	var base *finalCounts
	if c.baseline {
		step(fmt.Sprintf("undisturbed: %d jobs at %.1f/s, nothing killed", c.jobs, c.rate))
		run, err := runChaosWorld(ctx, s, c, "chaos-baseline", false)
		if err != nil {
			return fmt.Errorf("undisturbed run: %w", err)
		}
		base = &run.final
	}
	step(fmt.Sprintf("%d jobs at %.1f/s; SIGKILL the Temporal server about every %s, worker 1 of %d about every %s, the webhook about every %s; %s",
		c.jobs, c.rate, c.temporalEvery, c.workers, c.workerEvery, c.webhookEvery, c.loseStoreText()))
	run, err := runChaosWorld(ctx, s, c, "chaos", true)
	if err != nil {
		return err
	}
	report, pass := run.report(c, base, s.serverName())
	fmt.Print(report)
	if err := writeReport(filepath.Join(s.dir, "results.md"), "chaos run", report, started); err != nil {
		return err
	}
	if !pass {
		return fmt.Errorf("chaos checks failed; logs in %s", s.dir)
	}
	return nil
}

// chaosCheck is one row of the checks table: what must hold, whether it did, and
// what was seen.
type chaosCheck struct {
	name string
	ok   bool
	got  string
}

// report is the results table; pass says whether every check held.
func (r *chaosRun) report(c chaosConfig, base *finalCounts, server string) (string, bool) {
	r.mu.Lock() // recoveries still being followed append under it
	defer r.mu.Unlock()
	checks := []chaosCheck{
		{"every job completed", r.final.failed == 0 && r.final.succeeded == c.jobs, fmt.Sprintf("%d of %d succeeded", r.final.succeeded, c.jobs)},
		{"no pod deleted while its runner was busy", len(r.violations) == 0, strings.Join(append([]string{fmt.Sprint(len(r.violations))}, r.violations...), "; ")},
		{"no job interrupted", r.interrupted == 0, fmt.Sprint(r.interrupted)},
		{"no orphan pod, Secret or registered runner after the drain", r.drainErr == nil && r.final.orphans() == 0, r.drainText()},
	}
	if base != nil {
		checks = append(checks, chaosCheck{"final counts equal the undisturbed run's", *base == r.final, fmt.Sprintf("chaos: %s; undisturbed: %s", r.final, *base)})
	}
	if c.minKills > 0 {
		least := int64(c.minKills)
		enough := r.workerKills.Load() >= least && r.webhookKills.Load() >= least && (c.temporalEvery == 0 || r.temporalKills.Load() >= least)
		checks = append(checks, chaosCheck{fmt.Sprintf("each part killed at least %d times", c.minKills), enough, r.kills()})
	}
	if c.loseStoreAt > 0 {
		checks = append(checks, r.lostCheck())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Chaos on the %s: %d jobs at %.1f/s, HRA max %d; Temporal server SIGKILLed about every %s; %s (worker's --workflow-check-period %s); %d worker replica(s), the first SIGKILLed about every %s; webhook about every %s; %.0f %% duplicated, %.0f %% reordered deliveries\n\n",
		server, c.jobs, c.rate, c.maxRunners, c.temporalEvery, c.loseStoreText(), chaosWorkflowCheckPeriod, c.workers, c.workerEvery, c.webhookEvery, c.duplicate*100, c.reorder*100)
	b.WriteString("| Check | Result | Pass |\n|---|---|---|\n")
	pass := true
	for _, check := range checks {
		fmt.Fprintf(&b, "| %s | %s | %v |\n", check.name, check.got, check.ok)
		pass = pass && check.ok
	}
	b.WriteString("\n| Figure | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Temporal server back (health check) after a kill, each | %s |\n", durations(r.temporalDowntimes))
	fmt.Fprintf(&b, "| worker kill → its runner activity running again on a replica, p50 / max (%d measured; %d more lost their history with the store) | %s |\n", len(r.recoveries), r.followsLost, recoverySummary(r.recoveries))
	fmt.Fprintf(&b, "| deliveries: events, posted, accepted, failed (webhook or Temporal down), duplicated, reordered | %d, %d, %d, %d, %d, %d |\n",
		r.stats.Events, r.stats.Posted, r.stats.Accepted, r.stats.Failed, r.stats.Duplicated, r.stats.Reordered)
	r.lostFigures(&b)
	fmt.Fprintf(&b, "| job queued → started, p50 / p95 / p99 | %s |\n", r.waits)
	fmt.Fprintf(&b, "| runner pods created per job | %.2f |\n", float64(r.podsCreated)/float64(c.jobs))
	fmt.Fprintf(&b, "| all jobs done after / drained after | %s / %s |\n", r.allDone.Round(time.Second), r.drained.Round(time.Second))
	if base != nil {
		fmt.Fprintf(&b, "| undisturbed run: final counts | %s |\n", *base)
	}
	return b.String(), pass
}

func (r *chaosRun) drainText() string {
	if r.drainErr != nil {
		return r.final.orphanText() + "; " + r.drainErr.Error()
	}
	return r.final.orphanText()
}

func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(100 * time.Millisecond).String()
	}
	return strings.Join(parts, ", ")
}

func recoverySummary(rs []time.Duration) string {
	if len(rs) == 0 {
		return "no kill caught a runner activity running"
	}
	p := world.PercentilesOf(rs)
	return fmt.Sprintf("%s / %s", p.P50.Round(100*time.Millisecond), p.Max.Round(100*time.Millisecond))
}
