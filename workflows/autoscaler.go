package workflows

// The autoscaler workflow owns one HorizontalRunnerAutoscaler's decisions:
//
//	job signals ──batch window──▶ reservations (by workflow_job ID)
//	                                   │ expiry timers, starved ones restarted
//	metrics (sync period) ─────────────┤
//	scheduled overrides (rrule) ───────┤──▶ DesiredReplicas ──▶ `scale` signal to the pool
//	force-scale signal ────────────────┘        │ held for the scale-down delay
//	                                            └──▶ HRA status (desired, last scale-out, schedule)
//
// Job events come one per `job` signal, or several per `jobs` signal (the
// webhook's group commit); both apply the same way, in order.
//
// A periodic reconcile lists queued jobs through the cached GitHub client, so a
// missed webhook costs at most one reconcile period.

import (
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

const autoscalerMaxHistory = 5000

// AutoscalerWorkflow runs one autoscaler; its ID is AutoscalerWorkflowID(ns, name).
func AutoscalerWorkflow(ctx workflow.Context, in AutoscalerInput) error {
	a := &autoscalerRun{fresh: in.State == nil}
	if in.State != nil {
		a.state = *in.State
	} else {
		a.state = AutoscalerState{Spec: in.Spec}
	}
	a.state.Spec = a.state.Spec.WithDefaults()
	if a.state.Since.IsZero() {
		a.state.Since = workflow.Now(ctx)
	}
	a.jobs = workflow.GetSignalChannel(ctx, contract.SignalJob)
	a.batches = workflow.GetSignalChannel(ctx, contract.SignalJobs)
	a.specs = workflow.GetSignalChannel(ctx, contract.SignalSpec)
	a.forces = workflow.GetSignalChannel(ctx, contract.SignalForceScale)
	a.deletes = workflow.GetSignalChannel(ctx, contract.SignalDelete)
	a.scaleSets = workflow.GetSignalChannel(ctx, contract.SignalScaleSet)
	a.readyTimes = readyTimeChannel(ctx)
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (AutoscalerState, error) { return a.state, nil }); err != nil {
		return err
	}
	if a.handBack = workflow.GetVersion(ctx, handBackVersion, workflow.DefaultVersion, 1) >= 1; a.handBack {
		a.state.Spec.Capacity = withoutHandedBack(a.state.Spec.Capacity)
	}
	for !a.state.Deleting {
		wake := a.decide(ctx)
		info := workflow.GetInfo(ctx)
		if info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > autoscalerMaxHistory {
			a.awaitTells(ctx)
			a.drainSignals(ctx)
			return workflow.NewContinueAsNewError(onControlQueue(ctx), AutoscalerWorkflow, AutoscalerInput{Spec: a.state.Spec, State: &a.state})
		}
		a.wait(ctx, wake)
	}
	return nil
}

type autoscalerRun struct {
	state                                 AutoscalerState
	jobs, batches, specs, forces, deletes workflow.ReceiveChannel
	// scaleSets brings a scale set listener's messages (autoscaler_scaleset.go).
	scaleSets  workflow.ReceiveChannel
	readyTimes workflow.ReceiveChannel
	// warmOn: this decision keeps an auto buffer (withWarm).
	warmOn bool
	// woke: a signal or the timer asks for a decision (wait).
	woke bool
	// fresh: the workflow started with no state and has not reconciled yet.
	fresh bool
	// timer wakes the next decision; kept across waits (keptWakeTimerVersion).
	timer wakeTimer
	// tells are job starts passed on to runners, their results to come (tellRunner).
	tells []workflow.Future
	// handBack: this run notes job starts and hands jobs back to ARC while a
	// drain holds it (handBackVersion).
	handBack bool
}

// keptWakeTimerVersion marks autoscalers that keep their wake-up timer across
// decisions (wakeTimer), where older runs started one per decision.
const keptWakeTimerVersion = "kept-wake-timer"

// decide applies what is due, sends the result, and returns when to wake next.
func (a *autoscalerRun) decide(ctx workflow.Context) time.Time {
	s := &a.state
	spec := s.Spec
	now := workflow.Now(ctx)
	var wake []time.Time

	if len(s.Pending) > 0 && !now.Before(s.LastApplied.Add(spec.BatchWindow)) {
		a.applyPending(ctx, now)
	}
	if len(s.Pending) > 0 {
		wake = append(wake, s.LastApplied.Add(spec.BatchWindow))
	}
	a.sendForwards(ctx)
	a.forgetSpilled(now)
	s.Reservations.Expire(now, spec.Max)
	wake = append(wake, s.Reservations.NextExpiry(spec.Max))
	if s.Force != nil && !now.Before(s.Force.Until) {
		s.Force = nil
	}
	if s.Force != nil {
		wake = append(wake, s.Force.Until)
	}
	if len(spec.Metrics) > 0 && !now.Before(s.NextMetrics) {
		a.pullMetrics(ctx)
		s.NextMetrics = workflow.Now(ctx).Add(spec.SyncPeriod)
	}
	if len(spec.Metrics) > 0 {
		wake = append(wake, s.NextMetrics)
	}
	if spec.ReconcilePeriod > 0 && len(spec.Repositories) > 0 && spec.ScaleSet == "" {
		if !now.Before(s.NextSync) {
			a.reconcileQueuedJobs(ctx)
			s.NextSync = workflow.Now(ctx).Add(spec.ReconcilePeriod)
		}
		wake = append(wake, s.NextSync)
	}
	wake = append(wake, a.handBackToARC(ctx, now))

	schedule, err := MatchSchedule(spec.Overrides, now)
	if err != nil {
		workflow.GetLogger(ctx).Warn("scheduled overrides ignored", "hra", spec.Name, "error", err)
	}
	minReplicas := minReplicasOf(spec, schedule)
	wake = append(wake, schedule.ActiveUntil, schedule.NextStart)

	in := DesiredInput{
		Now: now, Min: minReplicas, Max: spec.Max, Suggested: s.Suggested,
		Reserved: a.reserved() + manualReservations(spec, s.ReleasedCapacity, now, &wake), IdleRunners: spec.IdleRunners,
		PreviousDesired: s.Desired, LastScaleOut: s.LastScaleOut, ScaleDownDelay: spec.ScaleDownDelay, Force: s.Force,
	}
	a.withWarm(ctx, &in, schedule, &wake)
	out := DesiredReplicas(in)
	if out.ScaledOut {
		s.LastScaleOut = now
	}
	s.Desired = &out.Desired
	wake = append(wake, out.HoldUntil)
	if !a.sendScale(ctx, out) {
		wake = append(wake, workflow.Now(ctx).Add(10*time.Second)) // the pool is not there yet
	}
	a.writeStatus(ctx, schedule)
	a.writeWarmStatus(ctx)
	return earliest(now, wake)
}

// minReplicasOf is minReplicas, or what a scheduled override in force sets.
func minReplicasOf(spec contract.AutoscalerSpec, schedule ScheduleMatch) int {
	if schedule.Active != nil && schedule.Active.MinReplicas != nil {
		return *schedule.Active.MinReplicas
	}
	return spec.Min
}

// minReplicas is minReplicasOf at now; a broken schedule, which decide reports,
// counts as none.
func (a *autoscalerRun) minReplicas(now time.Time) int {
	schedule, _ := MatchSchedule(a.state.Spec.Overrides, now)
	return minReplicasOf(a.state.Spec, schedule)
}

// manualReservations counts the spec's capacityReservations in force now, less
// what completions released of them, and adds their boundaries to the wake-ups.
func manualReservations(spec contract.AutoscalerSpec, released map[string]int, now time.Time, wake *[]time.Time) int {
	n := 0
	for _, r := range spec.Capacity {
		switch {
		case now.Before(r.EffectiveTime.Time):
			*wake = append(*wake, r.EffectiveTime.Time)
		case now.Before(r.ExpirationTime.Time):
			n += max(r.Replicas-released[capacityKey(r)], 0)
			*wake = append(*wake, r.ExpirationTime.Time)
		}
	}
	return n
}

func earliest(now time.Time, times []time.Time) time.Time {
	var next time.Time
	for _, t := range times {
		if !t.After(now) {
			continue
		}
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

func (a *autoscalerRun) applyPending(ctx workflow.Context, now time.Time) {
	for _, ev := range a.state.Pending {
		a.applyJob(ctx, ev, now)
	}
	a.state.Pending, a.state.LastApplied = nil, now
}

// sendScale tells the pool the desired count, when it changed. It reports false when
// the pool could not be reached.
func (a *autoscalerRun) sendScale(ctx workflow.Context, out DesiredOutput) bool {
	s := &a.state
	// The ceiling alone changing sends nothing: a run continued from before it
	// has Sent without one, and must decide as it did then.
	req := ScaleRequest{Replicas: out.Desired, EffectiveTime: s.Reservations.LatestEffectiveTime(), Ceiling: max(s.Spec.Max, out.Desired)}
	if out.Demand < out.Desired {
		req.Demand = &out.Demand
	}
	if s.Force != nil && s.Force.Since.After(req.EffectiveTime) {
		req.EffectiveTime = s.Force.Since // a newer effective time makes the request go out now
	}
	req.Finished = a.finishedForPool(ctx)
	if len(req.Finished) > 0 {
		req.Failed = s.Failed // they name finished runners, so go out with them
	}
	heardQueued := !s.Warm.Arrivals.Last.IsZero() // it has heard a job queue, so it hears them complete
	req.NamesFinished = heardQueued || a.scaleSetNamesFinished(ctx)
	req.StartsTold = heardQueued && workflow.GetVersion(ctx, jobStartedSignalVersion, workflow.DefaultVersion, 1) >= 1
	req.Warm = a.warmRequest(ctx)
	req.NamesWithin = a.namesWithin()
	if a.defersCompletion(ctx, req, out) {
		return true
	}
	if s.Sent != nil && s.Sent.Replicas == req.Replicas && s.Sent.Demanded() == req.Demanded() && !req.EffectiveTime.After(s.Sent.EffectiveTime) &&
		len(req.Finished) == 0 && req.Warm.same(s.Sent.Warm) {
		return true
	}
	if s.Sent != nil && req.EffectiveTime.Before(s.Sent.EffectiveTime) {
		req.EffectiveTime = s.Sent.EffectiveTime
	}
	req.DecidedAt = workflow.Now(ctx)
	a.runningForPool(ctx, &req)
	pool := contract.PoolWorkflowID(s.Spec.Namespace, s.Spec.TargetKind, s.Spec.TargetName)
	if err := workflow.SignalExternalWorkflow(ctx, pool, "", contract.SignalScale, req).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot scale the pool; retrying", "hra", s.Spec.Name, "pool", pool, "error", err)
		return false
	}
	workflow.GetLogger(ctx).Info("scaled", "hra", s.Spec.Name, "pool", pool, "replicas", out.Desired, "demand", out.Demand)
	req.Finished, s.Finished = nil, nil
	req.Failed, s.Failed = nil, nil
	req.Running, s.Running = nil, nil
	a.warmSent(&req)
	s.Sent = &req
	return true
}

func (a *autoscalerRun) writeStatus(ctx workflow.Context, schedule ScheduleMatch) {
	s := &a.state
	status := HRAStatus{DesiredReplicas: s.Desired, ScheduledOverridesSummary: schedule.Summary()}
	if !s.LastScaleOut.IsZero() {
		t := s.LastScaleOut
		status.LastSuccessfulScaleOutTime = &t
	}
	if statusEqual(status, s.Status) {
		return
	}
	in := calls.HRAStatusInput{Namespace: s.Spec.Namespace, Name: s.Spec.Name, DesiredReplicas: status.DesiredReplicas,
		LastSuccessfulScaleOutTime: status.LastSuccessfulScaleOutTime, ScheduledOverridesSummary: status.ScheduledOverridesSummary}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.UpdateHRAStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot write HRA status", "hra", s.Spec.Name, "error", err)
		return
	}
	s.Status = status
}

func statusEqual(a, b HRAStatus) bool {
	eqInt := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqStr := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqTime := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return eqInt(a.DesiredReplicas, b.DesiredReplicas) && eqStr(a.ScheduledOverridesSummary, b.ScheduledOverridesSummary) &&
		eqTime(a.LastSuccessfulScaleOutTime, b.LastSuccessfulScaleOutTime)
}

func (a *autoscalerRun) pullMetrics(ctx workflow.Context) {
	spec := a.state.Spec
	in := calls.MetricsInput{
		Namespace: spec.Namespace, Pool: spec.TargetName, Scope: spec.Scope, Labels: spec.TargetLabels,
		Repositories: spec.Repositories, Metrics: spec.Metrics, CurrentReplicas: 1,
	}
	if a.state.Desired != nil {
		in.CurrentReplicas = *a.state.Desired
	}
	var suggested *int
	if err := workflow.ExecuteActivity(githubOptions(ctx), calls.SuggestReplicas, in).Get(ctx, &suggested); err != nil {
		workflow.GetLogger(ctx).Warn("metrics unavailable; keeping the last suggestion", "hra", spec.Name, "error", err)
		return
	}
	a.state.Suggested = suggested
}

func (a *autoscalerRun) wait(ctx workflow.Context, wake time.Time) {
	wctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(wctx)
	a.listen(ctx, sel)
	a.listenTells(ctx, sel)
	if workflow.GetVersion(ctx, keptWakeTimerVersion, workflow.DefaultVersion, 1) >= 1 {
		if fired := a.timer.arm(ctx, wake); fired != nil {
			sel.AddFuture(fired, func(workflow.Future) { a.woke = true })
		}
	} else if !wake.IsZero() {
		sel.AddFuture(workflow.NewTimer(wctx, max(wake.Sub(workflow.Now(ctx)), time.Millisecond)), func(workflow.Future) { a.woke = true })
	}
	// Job starts alone change nothing to decide (quietStart): the wait goes
	// on, on the same timer, instead of a decision and a new timer per start.
	for a.woke = false; !a.woke; {
		sel.Select(wctx)
		for sel.HasPending() {
			sel.Select(wctx)
		}
	}
}

var errBadForceScale = errors.New("force-scale needs a replicas count >= 0 and a positive duration like \"30m\"")
