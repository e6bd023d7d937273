package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// Deferred completions. A job's completed delivery used to send its pool a
// scale request at once, naming the job's runner (Finished) and a lower
// demand, though the count it held for the scale-down delay did not change:
// the second scale request of every job, an action each. A pool that counts
// an ended runner until its autoscaler names it (pool_unheard.go) needs the
// name only before that count runs out; the request that ends the hold, or
// the next job's, carries it.

// deferredCompletionsVersion marks autoscalers that hold such a request back.
const deferredCompletionsVersion = "deferred-completions"

// namesWithinGrace covers the hop from the autoscaler's decision to the pool.
const namesWithinGrace = 30 * time.Second

// namesWithin is how long after a completion this autoscaler may take to
// name its runner: its scale-down delay, with a grace.
func (a *autoscalerRun) namesWithin() time.Duration {
	if a.state.Spec.ScaleDownDelay <= 0 {
		return 0
	}
	return a.state.Spec.ScaleDownDelay + namesWithinGrace
}

// defersCompletion says whether req may wait for the next request: it differs
// from the one the pool holds only by finished runners and a lower demand,
// while the count is held until out.HoldUntil, which wakes this autoscaler
// to send anyway before the pool stops counting those runners. A failed job
// goes at once (its runner may need a re-run), as does anything else.
func (a *autoscalerRun) defersCompletion(ctx workflow.Context, req ScaleRequest, out DesiredOutput) bool {
	s := &a.state
	sent := s.Sent
	if sent == nil || !req.NamesFinished || len(req.Finished) == 0 || len(req.Failed) > 0 || sent.NamesWithin <= 0 ||
		req.Replicas != sent.Replicas || req.Demanded() > sent.Demanded() || req.EffectiveTime.After(sent.EffectiveTime) ||
		!req.Warm.same(sent.Warm) || out.HoldUntil.IsZero() {
		return false
	}
	if out.HoldUntil.Sub(workflow.Now(ctx)) > sent.NamesWithin-namesWithinGrace {
		return false
	}
	return workflow.GetVersion(ctx, deferredCompletionsVersion, workflow.DefaultVersion, 1) >= 1
}
