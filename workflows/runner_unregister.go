package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// unregister removes the runner from GitHub before its pod is deleted.
func (r *runnerRun) unregister(ctx workflow.Context) error {
	if r.waitUntilRetryAt(ctx) {
		return nil
	}
	if r.state.RunnerID == 0 {
		found, err := r.findRunner(ctx, true)
		if err != nil {
			return nil // rate limited: RetryAt is set
		}
		if !found {
			// Never registered (or already removed by GitHub). Delete the pod, then
			// look once more in case it registered in between.
			r.state.Unverified = !r.state.Pod.Exited()
			r.setPhase(ctx, PhaseDeleting)
			return nil
		}
	}

	r.state.RemoveAttempts++
	err := r.removeRunner(ctx)
	if reset, limited := calls.RateLimitReset(err); limited {
		r.state.RetryAt = reset
		return nil
	}
	switch {
	case calls.IsErrorType(err, calls.ErrTypeRunnerBusy):
		r.setPhase(ctx, PhaseBusy)
		if r.state.Pod.Exited() || !r.in.Ephemeral {
			r.state.RetryAt = workflow.Now(ctx).Add(r.timings.BusyRetry)
		}
	case err != nil:
		// Retries are exhausted; try again after the busy interval.
		workflow.GetLogger(ctx).Warn("RemoveRunner failed", "runner", r.in.Pod.Name, "error", err)
		r.state.RetryAt = workflow.Now(ctx).Add(r.timings.BusyRetry)
	default:
		r.setPhase(ctx, PhaseDeleting)
	}
	return nil
}

// awaitBusyRunner waits while GitHub reports a runner that must stop as busy. An
// ephemeral runner is left to finish its job and exit; a static one is asked again
// every minute. A runner whose pod is gone is asked a few more times.
func (r *runnerRun) awaitBusyRunner(ctx workflow.Context) {
	pod := r.state.Pod
	switch {
	case pod.Exited() && pod.Phase == "Succeeded" && r.in.Ephemeral:
		r.end(ctx, EndCompleted, PhaseDeleting)
		return
	case pod.Exited() && r.state.RemoveAttempts > r.timings.OrphanRetries:
		workflow.GetLogger(ctx).Warn("GitHub still lists the runner as busy after its pod ended; leaving it", "runner", r.in.Pod.Name)
		r.state.EndReason = EndLeftRegistered // more telling than why the pod went
		r.setPhase(ctx, PhaseDeleting)
		return
	}
	if r.state.RetryAt.IsZero() {
		if pod.Exited() {
			r.state.RetryAt = workflow.Now(ctx).Add(r.timings.BusyRetry)
		} else {
			// Ephemeral and running a job: only its exit can move it on.
			r.awaitSignal(ctx)
			return
		}
	}
	if !r.waitUntilRetryAt(ctx) {
		r.setPhase(ctx, PhaseUnregistering)
	}
}

func (r *runnerRun) deletePod(ctx workflow.Context) error {
	ref := r.podRef()
	if err := r.call(ctx, calls.DeleteRunnerPod, ref).Get(ctx, nil); err != nil {
		r.awaitDeletionRetry(ctx, err)
		return nil
	}
	r.state.DeleteBlocked = ""
	if r.state.Unverified {
		r.state.Unverified = false
		if found, err := r.findRunner(ctx, true); err == nil && found {
			// It registered after all: unregister it (its pod is gone, so it is idle).
			r.setPhase(ctx, PhaseUnregistering)
			return nil
		}
		// Its process may still register while the pod terminates: look
		// again once the pod is gone, after the pool heard of the end.
		r.state.RecheckWhenGone = r.in.Revision >= RunnerRevisionRecheckAfterPodGone
	}
	r.setPhase(ctx, PhaseDone)
	return nil
}

// removeRunner asks GitHub to remove the runner by the ID it was found under.
func (r *runnerRun) removeRunner(ctx workflow.Context) error {
	in := calls.RemoveRunnerInput{Scope: r.in.Scope, Name: r.in.Pod.Name, ID: r.state.RunnerID}
	return r.call(ctx, calls.RemoveRunner, in).Get(ctx, nil)
}

// removeLateRegistration removes a registration the runner's process made
// while its pod terminated (RunnerState.RecheckWhenGone). The pod is gone,
// so the runner is idle; a failure is logged, as nothing else can be done.
func (r *runnerRun) removeLateRegistration(ctx workflow.Context) {
	found, err := r.findRunner(ctx, true)
	if err != nil || !found {
		return
	}
	workflow.GetLogger(ctx).Warn("runner registered while its pod terminated; removing it", "runner", r.in.Pod.Name)
	if err := r.removeRunner(ctx); err != nil {
		workflow.GetLogger(ctx).Warn("cannot remove a late registration", "runner", r.in.Pod.Name, "error", err)
	}
}

// findRunner asks GitHub for the runner by name and records its ID. A rate limit
// sets RetryAt and returns an error. Registration checks read the scope's
// shared list; fresh reads it now, for the checks around deleting a pod of a
// runner not listed yet, which must not leave a registration behind.
func (r *runnerRun) findRunner(ctx workflow.Context, fresh bool) (bool, error) {
	var out calls.FindRunnerOutput
	in := calls.FindRunnerInput{Scope: r.in.Scope, Name: r.in.Pod.Name, Fresh: fresh, Patient: !fresh && r.patient(ctx)}
	err := r.call(ctx, calls.FindRunner, in).Get(ctx, &out)
	if reset, limited := calls.RateLimitReset(err); limited {
		r.state.RetryAt = reset
		return false, err
	}
	if err != nil {
		return false, err
	}
	if out.Found {
		r.state.RunnerID = out.ID
	}
	return out.Found, nil
}

// waitUntilRetryAt waits for RetryAt on a timer, returning early (true) when a
// signal arrives first. It returns false when there is nothing left to wait for.
func (r *runnerRun) waitUntilRetryAt(ctx workflow.Context) bool {
	if r.state.RetryAt.IsZero() || !r.state.RetryAt.After(workflow.Now(ctx)) {
		r.state.RetryAt = timeZero
		return false
	}
	fired := r.awaitSignalUntil(ctx, r.state.RetryAt)
	if fired {
		r.state.RetryAt = timeZero
	}
	return !fired
}

// awaitSignal blocks until a pod or stop signal arrives.
func (r *runnerRun) awaitSignal(ctx workflow.Context) {
	r.publishPhase(ctx)
	sel := workflow.NewSelector(ctx)
	r.listen(ctx, sel)
	sel.Select(ctx)
}

// awaitPodGone keeps a finished runner of RunnerRevisionLocal open until the pod
// watcher reports the pod it deleted gone or ended, at most PodGoneWait. Those
// last pod signals then reach a running workflow instead of racing its
// completion, which Temporal would refuse (UnhandledCommand), running the
// runner's last calls again. A real pod takes its termination grace period. A pod that had ended before sends nothing more
// (the watcher keeps quiet about deleting it), so nothing is awaited for it.
func (r *runnerRun) awaitPodGone(ctx workflow.Context) {
	if !r.local() || r.state.PodReleased || !r.podLive() {
		return
	}
	timeout := workflow.NewTimer(ctx, r.timings.PodGoneWait)
	for timedOut := false; r.podLive() && !timedOut; {
		sel := workflow.NewSelector(ctx)
		r.listen(ctx, sel)
		sel.AddFuture(timeout, func(workflow.Future) { timedOut = true })
		sel.Select(ctx)
	}
}

// podLive: the runner's pod exists and has not ended.
func (r *runnerRun) podLive() bool {
	pod := r.state.Pod
	return pod.Exists && pod.Phase != "Succeeded" && pod.Phase != "Failed"
}
