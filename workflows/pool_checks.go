package workflows

// Registration checks for runners that keep no timer of their own
// (RunnerRevisionPoolWakes). A runner told its job's start learns from it that
// it registered; its own first check, a timer, was an action a runner that the
// start nearly always made moot. The pool keeps one timer for all of them, at
// the first runner to have lived the registration timeout with no start
// heard, and asks that runner to check; the runner then times out from its
// pod's Ready condition, or finds itself registered, as before.

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// poolWakesVersion marks pools that start runners with PoolWakes.
const poolWakesVersion = "pool-registration-wakes"

// poolWakesBeforeStartsVersion marks pools whose runners wait for the pool's
// registration check before the pool heard its first job start. Such a
// runner kept a timer of its own for its first check, canceled when its
// start came: one action a runner for a fresh pool's first runners, every
// runner of a burst (1.00 of 9.66 actions a job, the bench's burst of 100).
// The start is told the same way before and after the first one is heard.
const poolWakesBeforeStartsVersion = "pool-wakes-before-starts"

// poolWakes says whether a new runner waits for its pool's registration
// check: a runner told its job's start, whose registration a start shows (not
// JIT: its pod is ready-untold), while the pool needs no early word of
// registrations (registrationsCanWait). The versions are asked only where the
// answer is yes.
func (p *poolRun) poolWakes(ctx workflow.Context, registrationOnly bool) bool {
	s := &p.state
	if !p.startsTold(registrationOnly) || s.Spec.ScaleSet != nil || s.Spec.Runner.JIT || !p.registrationsCanWait(registrationOnly) {
		return false
	}
	if !s.Scale.StartsDelivered && workflow.GetVersion(ctx, poolWakesBeforeStartsVersion, workflow.DefaultVersion, 1) < 1 {
		return false
	}
	return workflow.GetVersion(ctx, poolWakesVersion, workflow.DefaultVersion, 1) >= 1
}

// checkRegistrations asks each runner that waits for it and has lived the
// registration timeout with no start heard to check its registration, once,
// and returns when the next one comes due (zero: none waits).
func (p *poolRun) checkRegistrations(ctx workflow.Context) time.Time {
	s := &p.state
	timeout := s.Spec.RunnerTimings.withDefaults().RegistrationTimeout
	now := workflow.Now(ctx)
	var next time.Time
	for i := range s.Runners {
		r := &s.Runners[i]
		if !r.PoolWakes || r.CheckSent || r.Registered || r.Busy || r.Stopping || r.Finishing {
			continue
		}
		due := r.Created.Add(timeout)
		if now.Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		r.CheckSent = true
		// A runner that ended meanwhile has its runner-done on the way.
		_ = workflow.SignalExternalWorkflow(ctx, contract.RunnerWorkflowID(s.Spec.Namespace, r.Name), "",
			contract.SignalRegistrationCheck, nil).Get(ctx, nil)
	}
	return next
}
