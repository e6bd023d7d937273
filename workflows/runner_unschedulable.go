package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// A pod that no node can take holds its runner's slot for nothing. After
// UnschedulableTimeout the runner deletes it and ends, and its pool backs off as
// after any runner that could not start. ARC waits for such a pod forever: its
// registration timeout counts from Ready.

// unschedulableDeadline is when the runner gives up on its unschedulable pod;
// false when the pod is not unschedulable.
func (r *runnerRun) unschedulableDeadline() (time.Time, bool) {
	since := r.state.UnschedulableSince
	if since.IsZero() || !r.state.Pod.Unschedulable {
		return timeZero, false
	}
	return since.Add(r.timings.UnschedulableTimeout), true
}

func (r *runnerRun) unschedulableTooLong(ctx workflow.Context) bool {
	deadline, ok := r.unschedulableDeadline()
	return ok && !workflow.Now(ctx).Before(deadline)
}

// endUnschedulable deletes the pod that never ran, so a token runner cannot
// have registered; a JIT runner, registered by its creation, is removed first.
func (r *runnerRun) endUnschedulable(ctx workflow.Context) {
	workflow.GetLogger(ctx).Warn("no node can take the runner's pod; deleting it", "runner", r.in.Pod.Name,
		"unschedulable_for", r.timings.UnschedulableTimeout)
	next := PhaseDeleting
	if r.state.RunnerID != 0 {
		next = PhaseUnregistering
	}
	r.end(ctx, EndPodUnschedulable, next)
}

// awaitSignalUntil blocks until a pod or stop signal arrives or at passes, and
// reports whether at passed.
func (r *runnerRun) awaitSignalUntil(ctx workflow.Context, at time.Time) bool {
	r.publishPhase(ctx)
	wctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(wctx)
	r.listen(ctx, sel)
	passed := false
	sel.AddFuture(workflow.NewTimer(wctx, at.Sub(workflow.Now(ctx))), func(workflow.Future) { passed = true })
	sel.Select(wctx)
	return passed
}
