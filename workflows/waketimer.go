package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// wakeTimer is one workflow timer kept across a workflow's waits. A wait that
// needs waking no earlier than the pending timer fires keeps it; only a wait
// that needs an earlier wake starts a new one. A timer per wait bills one
// Timer action per signal that ends a wait; most of those waits end on a
// signal long before their timer.
//
// Runs from keptLaterWakesVersion on also keep the later timer when an earlier
// one starts, instead of canceling it: a pool's status write 30 s away used
// to cancel its registration check 10 minutes away, which the wait after the
// write then started again, one action more (0.4 of a pool's and autoscaler's
// 1.1 timers a job under the steady load were such cancellations).
type wakeTimer struct {
	// pending are the timers started and not yet fired, earliest first; at
	// most one before keptLaterWakesVersion.
	pending []pendingWake
}

type pendingWake struct {
	at     time.Time
	fired  workflow.Future
	cancel workflow.CancelFunc
}

// keptLaterWakesVersion marks runs whose wake timer keeps later timers
// pending when an earlier one starts.
const keptLaterWakesVersion = "kept-later-wakes"

// maxKeptWakes bounds the timers a workflow keeps pending: past it, the
// latest is canceled, as every later one was before keptLaterWakesVersion.
const maxKeptWakes = 3

// arm returns a future ready at or before at, or nil when at is zero and no
// timer is pending. A pending timer due earlier than at is kept: it wakes the
// workflow early once, and the wait after that arms for at.
func (t *wakeTimer) arm(ctx workflow.Context, at time.Time) workflow.Future {
	live := t.pending[:0]
	for _, p := range t.pending {
		if !p.fired.IsReady() {
			live = append(live, p)
		}
	}
	t.pending = live
	if len(t.pending) > 0 && (at.IsZero() || !t.pending[0].at.After(at)) {
		return t.pending[0].fired
	}
	if at.IsZero() {
		return nil
	}
	keep := maxKeptWakes - 1
	if workflow.GetVersion(ctx, keptLaterWakesVersion, workflow.DefaultVersion, 1) < 1 {
		keep = 0
	}
	for len(t.pending) > keep {
		last := len(t.pending) - 1
		t.pending[last].cancel()
		t.pending = t.pending[:last]
	}
	tctx, cancel := workflow.WithCancel(ctx)
	next := pendingWake{at: at, fired: workflow.NewTimer(tctx, max(at.Sub(workflow.Now(ctx)), time.Millisecond)), cancel: cancel}
	t.pending = append([]pendingWake{next}, t.pending...)
	return next.fired
}
