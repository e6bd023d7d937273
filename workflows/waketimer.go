package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// wakeTimer is one workflow timer kept across a workflow's waits. A wait that
// needs waking no earlier than the pending timer fires keeps it; only a wait
// that needs an earlier wake starts a new one (and cancels the old, which is
// free). A timer per wait bills one Timer action per signal that ends a wait;
// most of those waits end on a signal long before their timer.
type wakeTimer struct {
	at     time.Time
	fired  workflow.Future
	cancel workflow.CancelFunc
}

// arm returns a future ready at or before at, or nil when at is zero and no
// timer is pending. A pending timer due earlier than at is kept: it wakes the
// workflow early once, and the wait after that arms for at.
func (t *wakeTimer) arm(ctx workflow.Context, at time.Time) workflow.Future {
	if t.fired != nil && t.fired.IsReady() {
		t.fired = nil
	}
	if at.IsZero() || (t.fired != nil && !t.at.After(at)) {
		return t.fired
	}
	if t.fired != nil {
		t.cancel()
	}
	tctx, cancel := workflow.WithCancel(ctx)
	t.at, t.cancel = at, cancel
	t.fired = workflow.NewTimer(tctx, max(at.Sub(workflow.Now(ctx)), time.Millisecond))
	return t.fired
}
