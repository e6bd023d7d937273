package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// A JIT runner (a JIT pool's, or a scale set's) counts as registered when its
// pod turns Ready: GitHub registered it when it made its configuration. But
// Ready says only that the container started. An image that cannot start from
// a JIT configuration (summerwind/actions-runner exits 1 with "RUNNER_TOKEN
// must be set"; GitHub's image with no command) is Ready for a moment and then
// fails; taken as started, each failure made the next runner at once, and a
// scale-set pool made 64 pods in 90 s for one job. So in a JIT pool a runner's
// pod that fails before it took a job is a runner that could not start, and
// backs off as one; only a runner that took a job ends the streak.

// jitFailedStartsVersion marks pools that treat a JIT runner whose pod failed
// before it took a job as a failed start.
const jitFailedStartsVersion = "jit-failed-starts"

// jitPool says whether the pool's runners are JIT runners.
func (s *PoolState) jitPool() bool {
	return s.Spec.ScaleSet != nil || s.Spec.Runner.JIT
}

// jitFailedBeforeAJob says whether a runner of the pool whose pod failed,
// on its own, before it took a job, failed to start: true in a JIT pool.
func (p *poolRun) jitFailedBeforeAJob(ctx workflow.Context) bool {
	return p.state.jitPool() && workflow.GetVersion(ctx, jitFailedStartsVersion, workflow.DefaultVersion, 1) >= 1
}

// readyProvesNothing says whether a runner's Ready leaves the pool's failure
// streak as it is: in a JIT pool that is failing, where Ready is no proof of
// a start.
func (p *poolRun) readyProvesNothing(ctx workflow.Context) bool {
	return p.state.TimeoutStreak > 0 && p.state.jitPool() &&
		workflow.GetVersion(ctx, jitFailedStartsVersion, workflow.DefaultVersion, 1) >= 1
}

// endStreakOnJob ends a JIT pool's failure streak once one of its runners
// took a job: that one did start.
func (p *poolRun) endStreakOnJob(ctx workflow.Context) {
	s := &p.state
	if s.TimeoutStreak == 0 || !s.jitPool() || workflow.GetVersion(ctx, jitFailedStartsVersion, workflow.DefaultVersion, 1) < 1 {
		return
	}
	s.TimeoutStreak, s.CreateNotBefore, s.LastFailure = 0, time.Time{}, ""
}
