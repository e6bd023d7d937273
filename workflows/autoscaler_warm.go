package workflows

// The autoscaler's part of arcflow.dev/idle-runners: auto. It owns the
// decision: it hears every queued job (the arrival rate), it holds maxReplicas,
// the scheduled overrides and the scale-down delay, and the warm runners are
// replicas it asks for like any other. The pool measures the time to ready,
// as only it knows when it created each runner, from the starts of jobs that
// waited (which the autoscaler passes on from completed deliveries) or its
// runners' registrations, and reports it here with a ready-time signal when
// it moves (pool_warm.go). A scale-down delay of 0 keeps no buffer: the pool
// rests as soon as a job came.

import (
	"math"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// warmRunnersVersion marks autoscalers that size an auto buffer, write it to
// the HRA's status and pass it to their pool. A run from before it knows no
// auto spec, and decides as it did.
const warmRunnersVersion = "warm-runners-auto"

// withWarm adds the auto buffer to a decision's input and the time it comes
// off to the wake-ups. A fixed buffer (spec.IdleRunners) is left as it is.
func (a *autoscalerRun) withWarm(ctx workflow.Context, in *DesiredInput, schedule ScheduleMatch, wake *[]time.Time) {
	s := &a.state
	a.warmOn = false
	if s.Spec.AutoIdle == nil {
		s.Warm.Runners = 0
		return
	}
	if workflow.GetVersion(ctx, warmRunnersVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	a.warmOn = true
	scoped := workflow.GetVersion(ctx, warmScopeVersion, workflow.DefaultVersion, 1) >= 1
	warm := WarmInput{
		Rate: s.Warm.Arrivals.Rate, ReadyTime: s.Warm.ReadyTime,
		Room: in.Max - demandBase(*in), Cap: s.Spec.AutoIdle.Max, Overridden: schedule.Active != nil, MinOne: scoped,
	}
	resting := s.Warm.Arrivals.Resting(in.Now, s.Spec.ScaleDownDelay)
	if !resting {
		*wake = append(*wake, s.Warm.Arrivals.Last.Add(s.Spec.ScaleDownDelay))
	} else if scoped && WarmRunners(warm) > 0 { // a buffer that would rest, so the scope is worth asking about
		resting = !a.heldForScope(ctx, in.Now, wake)
	}
	warm.Resting = resting
	s.Warm.Runners = WarmRunners(warm)
	in.IdleRunners = s.Warm.Runners
}

// demandBase is what DesiredReplicas counts before a buffer: minReplicas and
// the reservations, or the metrics' suggestion when larger.
func demandBase(in DesiredInput) int {
	base := in.Min + in.Reserved
	if in.Suggested != nil {
		base = max(*in.Suggested, base)
	}
	return base
}

// noteArrival counts a job reserved here: a queued event new to this
// autoscaler, passed on from another one or not. A job this autoscaler
// passes on counts where it is reserved, so the pool that takes spill-over
// keeps warm runners for it.
func (a *autoscalerRun) noteArrival(now time.Time) {
	a.state.Warm.Arrivals.Arrive(now)
}

// waitedAtLeast tells a job that waited for its runner from one that found
// it idle: GitHub's timestamps have whole seconds.
const waitedAtLeast = 2 * time.Second

// noteStart keeps the runner a completed job started on, when the job had
// waited: it started as soon as that runner was ready, so the pool, which
// knows when it created the runner, learns its time to ready without the
// lag of the registration check. Only an auto buffer asks; a redelivery was
// noted already.
func (a *autoscalerRun) noteStart(ev contract.JobEvent) {
	s := &a.state
	if s.Spec.AutoIdle == nil || ev.Action != "completed" || ev.RunnerName == "" || ev.QueuedAt.IsZero() ||
		ev.StartedAt.Sub(ev.QueuedAt) < waitedAtLeast {
		return
	}
	_, delivered := s.Reservations.Deliveries[ev.DeliveryID]
	_, completed := s.Reservations.EarlyCompletions[ev.JobID]
	if (ev.DeliveryID != "" && delivered) || completed {
		return
	}
	s.Warm.Starts = append(s.Warm.Starts, RunnerStart{Runner: ev.RunnerName, StartedAt: ev.StartedAt, QueuedAt: ev.QueuedAt})
	if len(s.Warm.Starts) > readySamples {
		s.Warm.Starts = s.Warm.Starts[len(s.Warm.Starts)-readySamples:]
	}
}

// warmSent forgets the starts a scale request carried once the pool has it;
// the request kept as sent keeps none either (a copy: the signal's payload
// is left as it was sent).
func (a *autoscalerRun) warmSent(req *ScaleRequest) {
	if req.Warm != nil {
		sent := *req.Warm
		sent.Starts, a.state.Warm.Starts = nil, nil
		req.Warm = &sent
	}
}

// warmRequest is what a scale request tells the pool of the buffer; nil
// without an auto buffer.
func (a *autoscalerRun) warmRequest(ctx workflow.Context) *WarmRequest {
	if !a.warmOn {
		return nil
	}
	s := &a.state
	return &WarmRequest{
		Runners: s.Warm.Runners, Jobs: len(s.Reservations.Active), Rate: s.Warm.Arrivals.Rate, ReadyTime: s.Warm.ReadyTime,
		From: workflow.GetInfo(ctx).WorkflowExecution.ID, Starts: slices.Clone(s.Warm.Starts),
	}
}

func (a *autoscalerRun) onReadyTime(r ReadyTimeReport) {
	if r.ReadyTime > 0 {
		a.state.Warm.ReadyTime, a.state.Warm.Samples = r.ReadyTime, r.Samples
	}
}

func (a *autoscalerRun) listenWarm(ctx workflow.Context, sel workflow.Selector) {
	sel.AddReceive(a.readyTimes, func(c workflow.ReceiveChannel, _ bool) {
		var r ReadyTimeReport
		c.Receive(ctx, &r)
		a.woke = true
		a.onReadyTime(r)
	})
}

// drainWarm applies buffered ready-time signals before continue-as-new.
func (a *autoscalerRun) drainWarm() {
	var r ReadyTimeReport
	for a.readyTimes.ReceiveAsync(&r) {
		a.onReadyTime(r)
	}
}

// writeWarmStatus writes the HRA's status.warm when the count changed, the
// rate or the time to ready moved by a tenth, or the last job is newer than
// the one written by arrivalWrittenWithin: a rate that changes with every job
// would otherwise cost a write per job.
func (a *autoscalerRun) writeWarmStatus(ctx workflow.Context) {
	s := &a.state
	if !a.warmOn {
		if s.Warm.Written != nil { // the annotation is no longer auto
			a.clearWarmStatus(ctx)
		}
		return
	}
	now := WarmWritten{Runners: s.Warm.Runners, Rate: s.Warm.Arrivals.Rate, ReadyTime: s.Warm.ReadyTime, LastArrival: s.Warm.Arrivals.Last}
	if w := s.Warm.Written; w != nil && w.Runners == now.Runners && near(w.Rate, now.Rate) &&
		near(w.ReadyTime.Seconds(), now.ReadyTime.Seconds()) &&
		(now.LastArrival.Sub(w.LastArrival) < arrivalWrittenWithin ||
			workflow.GetVersion(ctx, warmScopeVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion) {
		return
	}
	status := v1alpha1.WarmRunnersStatus{Runners: now.Runners, ArrivalRate: v1alpha1.FormatArrivalRate(now.Rate)}
	if now.ReadyTime > 0 {
		status.TimeToReady = &metav1.Duration{Duration: now.ReadyTime.Round(100 * time.Millisecond)}
	}
	if !now.LastArrival.IsZero() {
		status.LastArrivalTime = &metav1.Time{Time: now.LastArrival}
	}
	in := calls.HRAWarmStatusInput{Namespace: s.Spec.Namespace, Name: s.Spec.Name, Warm: status}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.UpdateHRAWarmStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot write HRA warm status", "hra", s.Spec.Name, "error", err)
		return
	}
	s.Warm.Written = &now
}

// clearWarmStatus removes status.warm from an HRA whose buffer is no longer auto.
func (a *autoscalerRun) clearWarmStatus(ctx workflow.Context) {
	s := &a.state
	in := calls.HRAWarmStatusInput{Namespace: s.Spec.Namespace, Name: s.Spec.Name, Clear: true}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.UpdateHRAWarmStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot clear HRA warm status", "hra", s.Spec.Name, "error", err)
		return
	}
	s.Warm.Written = nil
}

// near: b is within a tenth of a (both 0 is near).
func near(a, b float64) bool { return math.Abs(a-b) <= math.Abs(a)/10 }

// readyTimeChannel is the autoscaler's ready-time signal channel.
func readyTimeChannel(ctx workflow.Context) workflow.ReceiveChannel {
	return workflow.GetSignalChannel(ctx, contract.SignalReadyTime)
}
