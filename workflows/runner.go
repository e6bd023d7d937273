package workflows

// The runner workflow owns one runner from pod creation to unregistration: the
// termination protocol ARC spreads over four controllers, top to bottom in one place.
//
//	Creating ──pod created──▶ Registering ──GitHub lists it──▶ Idle ◀──▶ Busy
//	   │ invalid spec             │  │ 10 min Ready, not registered     │
//	   ▼                          │  └──────────▶ Deleting ──▶ Done     │
//	  Done                        │                  ▲                  │
//	                 stop, or pod gone                │                  │
//	                              ▼                  │                  │
//	                        Unregistering ──204/404──┘◀──── stop ───────┘
//	                          │      ▲
//	              422 (busy)  ▼      │ static: every minute; rate limit: at reset
//	                         Busy ───┘
//	                          │ ephemeral: wait for the pod to exit, then no API call
//	                          └─────────────▶ Deleting ──▶ Done
//
// RemoveRunner always comes before the pod is deleted, so a busy runner is never
// killed: GitHub's 422 is the atomic "is it running a job" check. An ephemeral
// runner whose pod Succeeded was removed by GitHub itself, so no call is made. A pod
// deleted or failed by someone else is unregistered as far as it still can be, and
// the pool is told why. Every wait is a workflow timer or a signal.

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// RunnerWorkflow runs one runner. Its ID is RunnerWorkflowID(namespace, name).
func RunnerWorkflow(ctx workflow.Context, in RunnerInput) (RunnerDone, error) {
	r := &runnerRun{in: in, timings: in.Timings.withDefaults()}
	switch {
	case in.State != nil:
		r.state = *in.State
	case in.Adopted != nil:
		r.state = RunnerState{Phase: PhaseAdopted, Since: workflow.Now(ctx), RunnerID: in.Adopted.RunnerID, Pod: in.Adopted.Pod}
	default:
		r.state = RunnerState{Phase: PhaseCreating, Since: workflow.Now(ctx)}
	}
	r.podSignals = workflow.GetSignalChannel(ctx, contract.SignalPod)
	r.stopSignals = workflow.GetSignalChannel(ctx, contract.SignalStop)
	r.jobStarts = workflow.GetSignalChannel(ctx, contract.SignalJobStarted)
	r.checks = workflow.GetSignalChannel(ctx, contract.SignalRegistrationCheck)
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (RunnerState, error) { return r.state, nil }); err != nil {
		return RunnerDone{}, err
	}
	if r.local() && in.State == nil {
		r.published = r.state.Phase // set by the start (runnerKeywords)
		if in.Adopted == nil {
			r.published = publishedAtStart(in.Revision)
		}
	}
	if !r.local() {
		r.publishPhase(ctx)
	}

	for r.state.Phase != PhaseDone {
		if err := r.step(ctx); err != nil {
			return RunnerDone{}, err
		}
		info := workflow.GetInfo(ctx)
		if r.state.Phase != PhaseDone && (info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > r.timings.MaxHistoryEvents) {
			r.drainSignals(ctx)
			next := in
			next.State = &r.state
			return RunnerDone{}, workflow.NewContinueAsNewError(ctx, RunnerWorkflow, next)
		}
	}
	r.drainPodSignals(ctx) // a pod that failed while the runner stopped shows why
	done := RunnerDone{Name: in.Pod.Name, Reason: r.state.EndReason, RunnerID: r.state.RunnerID,
		NeverStarted: in.Pod.JIT && !r.state.JITStarted, Cause: r.lossCause()}
	if in.Revision < RunnerRevisionQuietEnd || !quietEnd(r.published) {
		r.publishPhase(ctx)
	}
	r.notifyPool(ctx, done)
	r.awaitPodGone(ctx)
	if r.state.RecheckWhenGone {
		r.removeLateRegistration(ctx)
	}
	r.drainSignals(ctx) // late pod events of a finished runner change nothing
	return done, nil
}

type runnerRun struct {
	in          RunnerInput
	timings     RunnerTimings
	state       RunnerState
	podSignals  workflow.ReceiveChannel
	stopSignals workflow.ReceiveChannel
	jobStarts   workflow.ReceiveChannel
	checks      workflow.ReceiveChannel
	// published is the phase the search attribute shows.
	published RunnerPhase
	// wake is the pending registration timer of a RunnerRevisionLocal run, kept
	// across signals instead of cancelled and started again for each.
	wake       workflow.Future
	cancelWake workflow.CancelFunc
}

func (r *runnerRun) step(ctx workflow.Context) error {
	switch r.state.Phase {
	case PhaseCreating:
		return r.create(ctx)
	case PhaseAdopted:
		r.takeOver(ctx)
	case PhaseRegistering:
		return r.awaitRegistration(ctx)
	case PhaseIdle:
		if r.in.RegistrationOnly {
			return r.holdRegistration(ctx)
		}
		if r.state.JobStarted && r.in.Revision >= RunnerRevisionBusyAfterIdle {
			r.setPhase(ctx, PhaseBusy) // its job came after it registered
			return nil
		}
		r.awaitStopOrExit(ctx)
	case PhaseBusy:
		if r.state.EndReason != "" { // busy while being unregistered
			r.awaitBusyRunner(ctx)
		} else {
			r.awaitStopOrExit(ctx)
		}
	case PhaseUnregistering:
		return r.unregister(ctx)
	case PhaseDeleting:
		return r.deletePod(ctx)
	}
	return nil
}

func (r *runnerRun) setPhase(ctx workflow.Context, phase RunnerPhase) {
	if r.state.Phase == phase {
		return
	}
	workflow.GetLogger(ctx).Info("runner phase", "runner", r.in.Pod.Name, "from", r.state.Phase, "to", phase)
	r.state.Phase, r.state.Since = phase, workflow.Now(ctx)
	if !r.local() {
		r.publishPhase(ctx)
	}
}

// end finishes the runner through the Deleting phase, unless a reason is already
// recorded (the first reason is the true one).
func (r *runnerRun) end(ctx workflow.Context, reason string, next RunnerPhase) {
	if r.state.EndReason == "" {
		r.state.EndReason = reason
	}
	r.setPhase(ctx, next)
}

// awaitRegistration checks GitHub with a backing-off timer until the runner is
// listed, while pod and stop signals may arrive. A pod Ready for the registration
// timeout without registering is deleted.
func (r *runnerRun) awaitRegistration(ctx workflow.Context) error {
	if r.in.Pod.JIT {
		return r.awaitJITStart(ctx)
	}
	if r.local() {
		return r.awaitRegistrationOnWake(ctx)
	}
	wctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(wctx)
	r.listen(ctx, sel)

	poll := false
	sel.AddFuture(workflow.NewTimer(wctx, r.pollDelay(ctx)), func(workflow.Future) { poll = true })

	timedOut := false
	if r.state.Pod.Ready {
		left := r.state.Pod.ReadySince.Add(r.timings.RegistrationTimeout).Sub(workflow.Now(ctx))
		if left <= 0 {
			timedOut = true
		} else {
			sel.AddFuture(workflow.NewTimer(wctx, left), func(workflow.Future) { timedOut = true })
		}
	}
	if deadline, ok := r.unschedulableDeadline(); ok && !timedOut && deadline.After(workflow.Now(ctx)) {
		// afterRegistrationWait gives up on the pod once the deadline passed.
		sel.AddFuture(workflow.NewTimer(wctx, deadline.Sub(workflow.Now(ctx))), func(workflow.Future) {})
	}
	if !timedOut && !r.unschedulableTooLong(ctx) {
		sel.Select(wctx)
	}

	return r.afterRegistrationWait(ctx, timedOut, poll)
}

// afterRegistrationWait acts on what ended a wait for registration.
func (r *runnerRun) afterRegistrationWait(ctx workflow.Context, timedOut, poll bool) error {
	switch {
	case r.state.Pod.Exited() || (r.state.StopRequested && !r.stopAwaitsRegistration(ctx)):
		r.afterExitOrStop(ctx)
	case r.state.JobStarted:
		// GitHub started a job on it, so it registered, and is busy.
		r.dropWake()
		r.setPhase(ctx, PhaseBusy)
		if !r.in.StartsTold {
			r.notifyRegistered(ctx) // its pool may not hear the start
		}
	case r.unschedulableTooLong(ctx):
		r.endUnschedulable(ctx)
	case timedOut:
		workflow.GetLogger(ctx).Warn("runner did not register in time; deleting its pod", "runner", r.in.Pod.Name)
		r.state.Unverified = true
		r.end(ctx, EndRegistrationTimeout, PhaseDeleting)
	case poll:
		r.state.Polls++
		r.state.RetryAt = timeZero
		found, err := r.findRunner(ctx, false)
		if err != nil || !found {
			return nil // rate limits and misses wait for the next poll
		}
		r.setPhase(ctx, PhaseIdle)
		r.notifyRegistered(ctx)
		if r.state.StopRequested && r.in.Revision >= RunnerRevisionFoundBeforeRemoval {
			// Its removal from GitHub follows at once; a lost task must not
			// forget that it found the runner (RunnerRevisionFoundBeforeRemoval).
			r.endTask(ctx)
		}
	}
	return nil
}

// awaitJITStart is registering for a JIT runner, which GitHub registered when it
// was created: nothing to look up. It counts as registered once its pod is
// Ready, as its runner then starts from its configuration; a pod that ends
// first is a runner that could not start.
func (r *runnerRun) awaitJITStart(ctx workflow.Context) error {
	if !r.state.Pod.Ready && !r.state.StopRequested && !r.state.Pod.Exited() && !r.unschedulableTooLong(ctx) {
		if deadline, ok := r.unschedulableDeadline(); ok {
			r.awaitSignalUntil(ctx, deadline)
		} else {
			r.awaitSignal(ctx)
		}
	}
	switch {
	case r.state.StopRequested || r.state.Pod.Exited():
		r.afterExitOrStop(ctx)
	case r.unschedulableTooLong(ctx):
		r.endUnschedulable(ctx)
	case r.state.Pod.Ready:
		r.state.JITStarted = true
		r.setPhase(ctx, PhaseIdle)
		r.notifyRegistered(ctx)
	}
	return nil
}

// pollDelay is the wait before the next registration check: backing off from
// RegistrationPollMin to RegistrationPollMax, and never before a rate limit resets.
func (r *runnerRun) pollDelay(ctx workflow.Context) time.Duration {
	delay := min(r.timings.RegistrationPollMin<<min(r.state.Polls, 8), r.timings.RegistrationPollMax)
	if (r.patient(ctx) && r.state.Polls > 0) || (r.in.StartsTold && r.state.Polls == 0 && !r.state.StopRequested) {
		// Its checks read a list refreshed about once a minute: more checks
		// in between would cost timers that mostly find the same list. A
		// runner told its job's start waits for it instead, unless stopped:
		// a stop wants to know at once (stopAwaitsRegistration).
		delay = r.timings.RegistrationPollMax
	}
	if wait := r.state.RetryAt.Sub(workflow.Now(ctx)); wait > delay {
		delay = wait // rate limited: no call before the reset
	}
	return delay
}

// awaitRegistrationOnWake is awaitRegistration for RunnerRevisionLocal runs: one
// timer wakes the runner for its next check or for the registration timeout,
// whichever is first, and pod signals in between leave it running. The timeout
// is checked at each wake, so it is honoured within one poll interval (at most
// RegistrationPollMax), as ARC's periodic reconcile honours it.
func (r *runnerRun) awaitRegistrationOnWake(ctx workflow.Context) error {
	if r.registrationDeadlinePassed(ctx) {
		return r.afterRegistrationWait(ctx, true, false)
	}
	if r.unschedulableTooLong(ctx) {
		return r.afterRegistrationWait(ctx, false, false)
	}
	if r.wake == nil && !r.awaitsPoolCheck() {
		delay := r.pollDelay(ctx)
		if r.state.Pod.Ready {
			delay = min(delay, r.state.Pod.ReadySince.Add(r.timings.RegistrationTimeout).Sub(workflow.Now(ctx)))
		}
		if deadline, ok := r.unschedulableDeadline(); ok {
			delay = min(delay, deadline.Sub(workflow.Now(ctx)))
		}
		wctx, cancel := workflow.WithCancel(ctx)
		r.wake, r.cancelWake = workflow.NewTimer(wctx, delay), cancel
	}
	r.publishPhase(ctx)
	sel := workflow.NewSelector(ctx)
	r.listen(ctx, sel)
	woke := false
	if r.wake != nil {
		sel.AddFuture(r.wake, func(workflow.Future) { woke, r.wake = true, nil })
	}
	sel.Select(ctx)
	poolCheck := r.state.CheckAsked
	if poolCheck {
		// The pool's check stands for the timer this runner did not start.
		r.state.CheckAsked, r.state.PoolChecked, woke = false, true, true
	}
	if r.podUntold() && (woke || (r.state.StopRequested && !r.state.Pod.Exited())) {
		r.readPod(ctx) // its Running and Ready were not signalled
	}
	switch {
	case woke:
	case r.state.Pod.Exited() || (r.state.StopRequested && !r.stopAwaitsRegistration(ctx)):
		r.dropWake() // one event, where letting it fire later would cost four
	case r.state.StopRequested && r.in.StartsTold && r.state.Polls == 0:
		r.dropWake() // the first check waited for a job's start; a stop wants to know now
	}
	if !woke {
		return r.afterRegistrationWait(ctx, false, false)
	}
	// The pool's check asks GitHub first even past the deadline: this runner
	// made no check before it, and may have registered long ago.
	timedOut := !poolCheck && r.registrationDeadlinePassed(ctx)
	return r.afterRegistrationWait(ctx, timedOut, !timedOut)
}

// dropWake cancels the pending registration timer, if any.
func (r *runnerRun) dropWake() {
	if r.wake != nil {
		r.cancelWake()
		r.wake = nil
	}
}

func (r *runnerRun) registrationDeadlinePassed(ctx workflow.Context) bool {
	pod := r.state.Pod
	return pod.Ready && !workflow.Now(ctx).Before(pod.ReadySince.Add(r.timings.RegistrationTimeout))
}

// awaitStopOrExit waits, without any timer, for a stop signal or the pod to end.
func (r *runnerRun) awaitStopOrExit(ctx workflow.Context) {
	// A stop or an exit drained into the state at continue-as-new is acted on at
	// once. Runs started before this fix wait for one more signal here, as they did.
	if (r.state.StopRequested || r.state.Pod.Exited()) &&
		workflow.GetVersion(ctx, "drained-stop", workflow.DefaultVersion, 1) == 1 {
		r.afterExitOrStop(ctx)
		return
	}
	r.publishPhase(ctx)
	sel := workflow.NewSelector(ctx)
	r.listen(ctx, sel)
	sel.Select(ctx)
	if r.state.StopRequested || r.state.Pod.Exited() {
		r.afterExitOrStop(ctx)
	}
}

// holdRegistration is the registration-only runner (seed 001): once registered, its
// pod is deleted and the runner stays in GitHub, offline, so GitHub queues jobs for
// a pool scaled to zero. A stop signal unregisters it.
func (r *runnerRun) holdRegistration(ctx workflow.Context) error {
	if !r.state.PodReleased {
		ref := r.podRef()
		if err := r.call(ctx, calls.DeleteRunnerPod, ref).Get(ctx, nil); err != nil {
			return err
		}
		r.state.PodReleased = true
	}
	for !r.state.StopRequested {
		r.awaitSignal(ctx) // pod events of the released pod change nothing
	}
	r.end(ctx, EndStopped, PhaseUnregistering)
	return nil
}

// afterExitOrStop decides the next phase once a stop was asked for or the pod ended.
func (r *runnerRun) afterExitOrStop(ctx workflow.Context) {
	pod := r.state.Pod
	switch {
	case pod.Exited() && pod.Phase == "Succeeded" && r.in.Ephemeral:
		// GitHub removed the ephemeral runner when its job ended: no call needed.
		r.end(ctx, EndCompleted, PhaseDeleting)
	case pod.Exited():
		reason := EndPodDeleted
		switch {
		case pod.Exists && pod.Phase == "Failed":
			reason = EndPodFailed
		case pod.Exists && pod.Phase == "Succeeded":
			reason = EndPodExited
		}
		if r.state.StopRequested {
			reason = EndStopped
		}
		r.end(ctx, reason, PhaseUnregistering)
	default:
		r.end(ctx, EndStopped, PhaseUnregistering)
	}
}

// ActivityHeartbeatTimeout is how long Temporal waits for a running activity's
// heartbeat before it retries the activity elsewhere. arcflow's worker heartbeats
// every running activity each second (worker.HeartbeatEvery), so this says "the
// worker died", not "the call is slow": a SIGKILLed replica's activity runs again
// on a surviving one about 5 s later plus the 1 s retry interval, where the 30 s
// start-to-close timeout alone would take 30 s. Five missed heartbeats in a row
// leave room for a slow Temporal frontend; a slow GitHub or Kubernetes call is
// still bounded by the start-to-close timeout only.
const ActivityHeartbeatTimeout = 5 * time.Second

// activity options: GitHub and Kubernetes calls retry with backoff on transient
// errors; the typed errors that the workflow handles itself are non-retryable.
func kubeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		HeartbeatTimeout:    ActivityHeartbeatTimeout,
		RetryPolicy:         callRetry(),
	})
}

// callRetry is how a Kubernetes or GitHub call is retried, as an activity task or
// as a local activity.
func callRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10}
}

func githubOptions(ctx workflow.Context) workflow.Context { return kubeOptions(ctx) }
