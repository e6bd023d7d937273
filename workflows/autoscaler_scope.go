package workflows

// A buffer that outlasts its own pool's jobs. One pool cannot tell a gap in
// its own slow load from the end of all load: a pool that sees a job a minute
// rests after each with a 30 s scale-down delay, and every one of its jobs
// waits a whole time to ready. So each auto buffer writes when it last heard
// of a queued job to its HRA's status.warm.lastArrivalTime (at most
// arrivalWrittenWithin behind), and once its own jobs have stopped for the
// delay it reads the others of its scope: the HRAs in its namespace whose
// runners register in the same repository, organization or enterprise. While
// one of them had a job within the delay, and the pool's own last job is
// within its Hold, the buffer stays; once the scope has been quiet for the
// delay it rests with the rest, so nothing is left after the last job
// anywhere, and it stays at rest until its own next job.

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// warmScopeVersion marks autoscalers whose buffer outlasts their own jobs
// while their scope is busy, that write their last job for the others, and
// that keep at least one warm runner (WarmInput.MinOne). A run from before it
// rests after the delay.
const warmScopeVersion = "warm-scope-hold"

// arrivalWrittenWithin bounds how far status.warm.lastArrivalTime may lag
// the autoscaler's last job: a busy pool writes it every 10 s at most.
// Kubernetes keeps it to the second, so a reader counts the scope busy
// arrivalLag longer than its delay.
const (
	arrivalWrittenWithin = 10 * time.Second
	arrivalLag           = arrivalWrittenWithin + time.Second
)

// heldForScope reports whether a buffer whose own jobs stopped for the
// scale-down delay stays, and adds when to look again to the wake-ups.
func (a *autoscalerRun) heldForScope(ctx workflow.Context, now time.Time, wake *[]time.Time) bool {
	s := &a.state
	w, delay := &s.Warm, s.Spec.ScaleDownDelay
	if delay <= 0 || w.RestedAfter.Equal(w.Arrivals.Last) {
		return false
	}
	until := w.Arrivals.Last.Add(w.Arrivals.Hold(delay))
	if !now.Before(until) {
		return false
	}
	if !now.Before(w.ScopeBusyUntil) {
		last, err := a.lastArrivalInScope(ctx)
		if err != nil { // resting costs nothing; the next job warms the pool again
			workflow.GetLogger(ctx).Warn("cannot tell whether the scope is busy; the warm buffer rests", "hra", s.Spec.Name, "error", err)
			w.RestedAfter = w.Arrivals.Last
			return false
		}
		w.ScopeBusyUntil = last.Add(delay + arrivalLag)
		if !now.Before(w.ScopeBusyUntil) {
			workflow.GetLogger(ctx).Info("the scope is quiet; the warm buffer rests", "hra", s.Spec.Name, "scopeLastArrival", last)
			w.RestedAfter = w.Arrivals.Last
			return false
		}
	}
	*wake = append(*wake, earliest(now, []time.Time{w.ScopeBusyUntil, until}))
	return true
}

// lastArrivalInScope asks Kubernetes when another autoscaler of the scope last
// heard of a job. It is a few list calls, run in the decision's workflow
// task; a failure is not retried for long, as resting is a safe answer.
func (a *autoscalerRun) lastArrivalInScope(ctx workflow.Context) (time.Time, error) {
	spec := a.state.Spec
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: 30 * time.Second,
		StartToCloseTimeout:    10 * time.Second,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var out calls.ScopeActivityOutput
	err := workflow.ExecuteLocalActivity(ctx, calls.LastArrivalInScope,
		calls.ScopeActivityInput{Namespace: spec.Namespace, Scope: spec.Scope.String(), Except: spec.Name}).Get(ctx, &out)
	return out.LastArrival, err
}
