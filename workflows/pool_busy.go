package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Busy state from deliveries. GitHub hands a job only to a registered, idle
// runner and names it in the job's in_progress delivery; the completed
// delivery names it again. An autoscaler passes both to its pool
// (ScaleRequest.Running and Finished), so before a scale-down the pool knows
// which of its runners are busy without listing the scope's runners: the list
// is read only when the deliveries cannot tell (runners from before the
// autoscaler passed them, adopted ones) or when every runner to stop looks busy
// (a completion may have been missed). A delivery still on its way when a
// runner is chosen only costs what a stale list costs: RemoveRunner's 422
// keeps a runner that took a job.

// busyFromJobsVersion marks pools that tell busy runners from deliveries.
const busyFromJobsVersion = "busy-from-jobs"

// markRunning applies a scale request's job starts and completions: a runner
// that took a job is registered and busy, and idle again once its job
// completed (an ephemeral one is finishing, markFinishing).
func (p *poolRun) markRunning(ctx workflow.Context, scale ScaleRequest) {
	s := &p.state
	if !scale.StartsDelivered {
		return
	}
	if s.StartsSince.IsZero() {
		s.StartsSince = workflow.Now(ctx)
	}
	for i := range s.Runners {
		r := &s.Runners[i]
		if r.Stopping || r.RegistrationOnly {
			continue
		}
		if slices.Contains(scale.Finished, r.Name) {
			r.Busy = false
		}
		// Named in both: a static runner that took its next job, or a start
		// delivered after its completion; busy errs on the safe side (an
		// ephemeral one is finishing anyway).
		if slices.Contains(scale.Running, r.Name) {
			r.Busy = true
			p.endStreakOnJob(ctx)
			if !r.Registered {
				// GitHub gave it a job, so it registered; when is not known, so
				// it says nothing of the time to ready (noteReady).
				r.Registered = true
				s.TimeoutStreak, s.CreateNotBefore, s.LastFailure = 0, time.Time{}, ""
			}
		}
	}
}

// busyFromJobs is which of the pool's registered runners are busy, as the
// deliveries told; ok is false when they cannot tell for some runner, which
// the scope's runner list then decides.
func (p *poolRun) busyFromJobs(ctx workflow.Context) (busy map[string]bool, ok bool) {
	s := &p.state
	if s.Scale == nil || !s.Scale.StartsDelivered || s.StartsSince.IsZero() {
		return nil, false
	}
	busy = map[string]bool{}
	for _, r := range s.Runners {
		switch {
		case !r.Registered || r.Stopping || r.RegistrationOnly:
		case r.Busy:
			busy[r.Name] = true
		case r.Adopted || r.Created.Before(s.StartsSince):
			return nil, false // it may have taken a job before starts were passed on
		}
	}
	if workflow.GetVersion(ctx, busyFromJobsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil, false
	}
	return busy, true
}

// registeredByJob reports whether the pool knows from a delivery that a runner
// that ended had registered, though the runner did not see itself listed yet.
func (s *PoolState) registeredByJob(r PoolRunner) bool {
	return r.Registered && !s.StartsSince.IsZero()
}

// patientRegistration says whether a new runner's registration checks may read
// an older list of the scope's runners (RunnerInput.PatientRegistration): the
// pool hears from deliveries that a runner registered when it takes a job, as
// it has heard at least one start.
func (p *poolRun) patientRegistration(registrationOnly bool) bool {
	return p.registrationsCanWait(registrationOnly) && p.state.Scale.StartsDelivered
}

// registrationsCanWait says whether the pool needs no early word that a new
// runner registered. Not for an auto warm buffer, whose idle runners'
// registrations are its time to ready, nor for the registration-only runner,
// which waits on its own, nor during a rollout, whose old runners go only once
// new ones registered.
func (p *poolRun) registrationsCanWait(registrationOnly bool) bool {
	s := &p.state
	if registrationOnly || s.Scale == nil || s.Scale.Warm != nil {
		return false
	}
	for _, r := range s.Runners {
		if !r.Stopping && !r.RegistrationOnly && r.TemplateHash != s.Spec.TemplateHash {
			return false
		}
	}
	return true
}

// startsTold says that a new runner hears its job's start from the pool's
// autoscaler (ScaleRequest.StartsTold). A warm buffer's runners check early
// all the same: their times to ready size the buffer.
func (p *poolRun) startsTold(registrationOnly bool) bool {
	s := &p.state
	return !registrationOnly && s.Scale != nil && s.Scale.StartsTold && s.Scale.Warm == nil
}
