package main

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/sim/world"
)

// recoveryWatch measures how long a runner's activity that a killed worker was
// running takes to run again on a live replica.
type recoveryWatch struct {
	temporal  client.Client
	namespace string
	run       *chaosRun
}

// killWorker SIGKILLs the worker and restarts it, and follows every runner
// activity it was running until another attempt of it starts or completes.
func (r *recoveryWatch) killWorker(ctx context.Context, p *world.Process) error {
	caught := r.runningOn(ctx, p.Pid())
	killed := time.Now()
	if err := p.Restart(); err != nil {
		return err
	}
	for _, a := range caught {
		go r.follow(ctx, a, killed)
	}
	return nil
}

// runningOn lists the started activities of the namespace's runner workflows that
// the process with this PID runs.
func (r *recoveryWatch) runningOn(ctx context.Context, pid int) []world.StartedActivity {
	started, err := world.StartedRunnerActivities(ctx, r.temporal, r.namespace)
	if err != nil {
		return nil // Temporal may be down itself; this kill is then not measured
	}
	var out []world.StartedActivity
	for _, a := range started {
		if a.RanBy(pid) {
			out = append(out, a)
		}
	}
	return out
}

// follow records when an activity the killed worker ran ran again on any
// worker (world.Rerun says how it is seen, in the run it was seen in). One
// that finished before the kill was not retried and is not counted; one whose
// run went with a lost store is counted in followsLost.
func (r *recoveryWatch) follow(ctx context.Context, a world.StartedActivity, killed time.Time) {
	anyWorker := func(string) bool { return true }
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return // never recovered: the run's checks fail on the runner it left
		case <-tick.C:
		}
		at, _, err := world.Rerun(ctx, r.temporal, a, anyWorker)
		if errors.Is(err, world.ErrNotRetried) {
			return
		}
		var gone *serviceerror.NotFound
		if errors.As(err, &gone) && r.run.lostSince(killed) {
			// Its history went with Temporal's store: whether it ran again is
			// no longer known, so it is counted apart, not as a recovery.
			r.run.mu.Lock()
			r.run.followsLost++
			r.run.mu.Unlock()
			return
		}
		if err != nil || at.IsZero() {
			continue // not yet, or Temporal restarting
		}
		r.run.mu.Lock()
		r.run.recoveries = append(r.run.recoveries, at.Sub(killed))
		r.run.mu.Unlock()
		return
	}
}
