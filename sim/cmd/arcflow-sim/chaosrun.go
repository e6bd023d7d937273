package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/world"
)

// chaosGitHubLatency slows every GitHub call, in both runs, so that a worker
// killed at a random moment is often in the middle of a runner's activity: the
// recovery of that activity is what the run measures.
const chaosGitHubLatency = time.Second

// chaosRun is what one run of the workload left and measured.
type chaosRun struct {
	final                    finalCounts
	drainErr                 error
	violations               []string
	interrupted, podsCreated int
	stats                    sim.SenderStats
	waits                    world.Percentiles
	allDone, drained         time.Duration
	// Kills so far, read by the progress line while the killers run.
	temporalKills, workerKills, webhookKills atomic.Int64
	// storeLost: Temporal's store was lost (lost has the details, under mu).
	storeLost atomic.Bool

	// temporalMu keeps a Temporal kill and the loss of its store apart.
	temporalMu sync.Mutex

	mu                sync.Mutex
	temporalDowntimes []time.Duration
	recoveries        []time.Duration
	// followsLost counts runner activities caught by a worker kill whose
	// history went with Temporal's store before they ran again.
	followsLost int
	// lost is the loss of Temporal's store, once it began (nil: not yet, or none).
	lost *lostStore
}

// runChaosWorld runs the workload in its own namespace, with the kills when faults
// is set, waits for every job and the drain, and reads the final counts.
func runChaosWorld(ctx context.Context, s *session, c chaosConfig, ns string, faults bool) (*chaosRun, error) {
	w, err := s.world(ctx, world.Config{
		Namespace: ns, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: 3, Workers: c.workers,
		Duplicate: c.duplicate, Reorder: c.reorder,
		// Deliveries sent while the webhook or Temporal is down are lost, as on
		// GitHub; the missed-webhook reconcile finds their jobs.
		Env: []string{"ARCFLOW_RECONCILE_PERIOD=15s", "ARCFLOW_WORKFLOW_CHECK_PERIOD=" + chaosWorkflowCheckPeriod.String()},
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	w.GitHub.SetLatency(chaosGitHubLatency)
	if err := w.Apply(ctx, autoscaledPool("chaos", "chaos-org/app", c.maxRunners)); err != nil {
		return nil, err
	}
	if err := s.waitAccepted(ctx, ns, "chaos"); err != nil {
		return nil, err
	}

	run := &chaosRun{}
	start := time.Now()
	chaosCtx, stopChaos := context.WithCancel(ctx)
	var killers sync.WaitGroup
	if faults {
		recovery := &recoveryWatch{temporal: s.temporal, namespace: ns, run: run}
		killers.Add(2)
		go func() {
			defer killers.Done()
			every(chaosCtx, c.workerEvery, 1, &run.workerKills, func() error { return recovery.killWorker(chaosCtx, w.Worker) })
		}()
		go func() {
			defer killers.Done()
			every(chaosCtx, c.webhookEvery, 2, &run.webhookKills, w.Webhook.Restart)
		}()
		if c.temporalEvery > 0 {
			killers.Add(1)
			go func() {
				defer killers.Done()
				every(chaosCtx, c.temporalEvery, 3, &run.temporalKills, func() error {
					run.temporalMu.Lock()
					defer run.temporalMu.Unlock()
					killed := time.Now()
					err := s.stack.RestartTemporal(chaosCtx)
					run.mu.Lock()
					run.temporalDowntimes = append(run.temporalDowntimes, time.Since(killed))
					run.mu.Unlock()
					return err
				})
			}()
		}
		if c.loseStoreAt > 0 {
			killers.Add(1)
			go func() {
				defer killers.Done()
				run.loseStore(chaosCtx, s, w, c, start)
			}()
		}
	}
	go func() {
		_ = sim.Workload{Jobs: c.jobs, Rate: c.rate, Repositories: []string{"chaos-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "chaos"}}}.Run(ctx, w.Queue)
	}()
	live := newProgressLine(os.Stdout)
	err = waitFor(ctx, 20*time.Minute, "every job to complete", func() bool {
		line, done := progress(w, c.jobs)
		if faults {
			line += " kills: " + run.kills()
		}
		live.show(line)
		return done
	})
	live.end()
	stopChaos()
	killers.Wait()
	if err != nil {
		return nil, err
	}
	run.allDone = time.Since(start)
	if err := deadPart(w); err != nil {
		return nil, fmt.Errorf("%w: it did not come back after its last kill, or died", err)
	}
	step("draining: waiting for the last runners to go and the scale-down delay to pass")
	drainStart := time.Now()
	// The pool writes its status after it hears the autoscaler's 0 and stops its
	// last runners: the counts are final when both statuses say 0. A runner the
	// pool never let go of would keep the RunnerDeployment's count up and fail
	// the drain.
	// Nothing kills a part now: one that dies fails the drain at once, saying how.
	var died error
	run.drainErr = waitFor(ctx, 5*time.Minute, "no runner pod, Secret or registered runner, and the autoscaler and the RunnerDeployment back at 0", func() bool {
		if died = deadPart(w); died != nil {
			return true
		}
		f, err := readFinalCounts(ctx, s, w)
		return err == nil && f.orphans() == 0 && f.desired == "0" && f.replicas == "0"
	})
	if died != nil {
		run.drainErr = fmt.Errorf("during the drain: %w", died)
	}
	run.drained = time.Since(drainStart)
	if run.final, err = readFinalCounts(ctx, s, w); err != nil {
		return nil, err
	}
	run.violations, run.interrupted = w.Runners.Violations(), w.Runners.Interrupted()
	run.podsCreated, run.stats = len(w.Runners.PodTimes()), w.Sender.Stats()
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
	}
	run.waits = world.PercentilesOf(waits)
	if run.lost != nil && run.lost.err == nil {
		if err := run.lost.afterLoss(ctx, s.temporal, w); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// deadPart names a worker or webhook process that is not running, and how it
// ended.
func deadPart(w *world.World) error {
	for _, p := range append(append([]*world.Process{}, w.Webhooks...), w.Workers...) {
		if state := p.ExitState(); state != "" {
			return fmt.Errorf("%s is not running (%s)", p.Name, state)
		}
	}
	return nil
}

func (r *chaosRun) kills() string {
	k := fmt.Sprintf("Temporal server %d, worker %d, webhook %d", r.temporalKills.Load(), r.workerKills.Load(), r.webhookKills.Load())
	if r.storeLost.Load() {
		k += "; Temporal's store lost"
	}
	return k
}

// every calls fault at random intervals around mean until ctx ends, counting the
// calls in n. A fault that fails ends the loop: its part did not come back, which
// the run then reports.
func every(ctx context.Context, mean time.Duration, seed uint64, n *atomic.Int64, fault func() error) {
	rng := rand.New(rand.NewPCG(seed, seed))
	for {
		t := time.NewTimer(mean/2 + time.Duration(rng.Int64N(int64(mean))))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		n.Add(1)
		if err := fault(); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
			return
		}
	}
}
