package workflows

// The pool workflow keeps one RunnerDeployment's or RunnerSet's runners at the
// desired count. It does not know which of the two it drives: each runner is a
// runner workflow of its own, and the runner's activities create a pod or a
// one-replica StatefulSet depending on the kind.
//
//	spec / scale / delete / runner-registered / runner-done signals
//	        │
//	        ▼
//	  plan (planPool) ──NeedBusy──▶ ask GitHub which runners are busy ──▶ plan again
//	        │
//	        ├── start runner workflows, all of a decision in one activity
//	        ├── send `stop` to the chosen runners (never a busy one)
//	        ├── write status and events to the custom resource
//	        └── wait for a signal, a deferred-creation timer, or a retry timer
//
// Runners report their end with a runner-done signal to the pool's workflow ID,
// which stays the same across continue-as-new, so the pool needs no handle on them.

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Pool timings.
const (
	// blockedRetry: how often a pool re-checks busy runners it waits to stop.
	blockedRetry = time.Minute
	// poolMaxHistory triggers continue-as-new besides Temporal's suggestion.
	poolMaxHistory = 5000
)

// PoolWorkflow runs one pool. Its ID is PoolWorkflowID(namespace, kind, name).
func PoolWorkflow(ctx workflow.Context, in PoolInput) error {
	p := &poolRun{}
	if in.State != nil {
		p.state = *in.State
	} else {
		p.state = PoolState{Spec: in.Spec}
	}
	p.specs = workflow.GetSignalChannel(ctx, contract.SignalSpec)
	p.scales = workflow.GetSignalChannel(ctx, contract.SignalScale)
	p.deletes = workflow.GetSignalChannel(ctx, contract.SignalDelete)
	p.registered = workflow.GetSignalChannel(ctx, contract.SignalRunnerRegistered)
	p.done = workflow.GetSignalChannel(ctx, contract.SignalRunnerDone)
	p.doneGrouped = workflow.GetSignalChannel(ctx, contract.SignalRunnersDone)
	p.scaleSetIDs = workflow.GetSignalChannel(ctx, contract.SignalScaleSetID)
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (PoolState, error) { return p.state, nil }); err != nil {
		return err
	}
	log := workflow.GetLogger(ctx)
	if in.State == nil && workflow.GetVersion(ctx, adoptARCVersion, workflow.DefaultVersion, 1) >= 1 {
		p.adoptARCRunners(ctx)
	}
	if in.State == nil && workflow.GetVersion(ctx, rebuildVersion, workflow.DefaultVersion, 1) >= 1 {
		p.adoptOwnRunners(ctx)
	}

	for {
		plan := p.plan(ctx)
		if err := p.apply(ctx, plan); err != nil {
			return err
		}
		p.volumeWake = p.tendVolumes(ctx)
		p.checkWake = p.checkRegistrations(ctx)
		p.tendWarm(ctx)
		p.rerunLostJobs(ctx)
		p.writeStatus(ctx, plan)
		if p.state.Deleting && len(p.state.Runners) == 0 {
			p.releaseResource(ctx)
			log.Info("pool drained and deleted", "pool", p.state.Spec.Name)
			return nil
		}
		p.forceDeletionAfterGrace(ctx)
		info := workflow.GetInfo(ctx)
		if info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > poolMaxHistory {
			for len(p.starting) > 0 {
				p.onStarted(ctx, p.starting[0])
			}
			p.drainSignals(ctx)
			return workflow.NewContinueAsNewError(onControlQueue(ctx), PoolWorkflow, PoolInput{Spec: p.state.Spec, State: &p.state})
		}
		p.wait(ctx, plan)
	}
}

type poolRun struct {
	state                                    PoolState
	specs, scales, deletes, registered, done workflow.ReceiveChannel
	// doneGrouped brings runners' ends grouped by the worker (SignalRunnersDone).
	doneGrouped workflow.ReceiveChannel
	// scaleSetIDs brings the scale set id from the pool's listener.
	scaleSetIDs workflow.ReceiveChannel
	events      []string
	// starting holds runner starts not yet confirmed; the pool waits for them only
	// before continue-as-new, so creating many runners is one round trip.
	starting []pendingStart
	// volumeWake is when a free volume slot comes due for deletion;
	// checkWake when a runner's registration check does (pool_checks.go).
	volumeWake, checkWake time.Time
	// statusDue is when a status change held back by the status interval is
	// written (pool_status.go); timer wakes the pool, kept across waits.
	statusDue time.Time
	timer     wakeTimer
}

func (p *poolRun) view(ctx workflow.Context, busy map[string]bool) PoolView {
	s := &p.state
	v := PoolView{
		Desired: s.Desired(), Held: s.Desired() - s.Demand(), TemplateHash: s.Spec.TemplateHash, Ephemeral: s.Spec.Ephemeral,
		CreateNotBefore: s.CreateNotBefore, WaitingForScaleSet: s.Spec.ScaleSet != nil && s.ScaleSetID == 0,
		MaxSurge: (s.Desired() + 1) / 2, DemandSurge: (s.Demand() + 1) / 2, Now: workflow.Now(ctx), Busy: busy,
	}
	if s.Scale != nil && !s.Deleting {
		v.Ceiling = s.Scale.Ceiling
	}
	for _, r := range s.Runners {
		if !r.RegistrationOnly {
			v.Runners = append(v.Runners, r)
		}
	}
	if s.Scale != nil && s.Spec.Ephemeral && s.LastJobFinished.After(s.scaleDecided()) {
		v.ReplaceNotBefore = s.LastJobFinished.Add(CompletionGrace)
	}
	v.Unheard, v.UnheardUntil = s.expireUnheard(v.Now) // forgets the expired ones
	v.SurgeCountsDraining = p.surgeCountsDraining(ctx)
	return v
}

func (p *poolRun) plan(ctx workflow.Context) PoolPlan {
	if p.state.Deleting {
		// Drain everything. A busy runner is safe to stop: it finishes its job
		// (ephemeral) or is retried until GitHub lets it go (static).
		var plan PoolPlan
		for _, r := range p.state.Runners {
			if !r.Stopping {
				plan.Stop = append(plan.Stop, r.Name)
			}
		}
		return plan
	}
	safe := workflow.GetVersion(ctx, safeVictimsVersion, workflow.DefaultVersion, 1) >= 1
	v := p.view(ctx, nil)
	v.SafeOrder = safe
	plan := p.planRollout(ctx, v)
	if !plan.NeedBusy && !plan.NeedPods {
		return p.withRegistrationOnly(plan)
	}
	var busy map[string]bool
	var phases map[string]corev1.PodPhase
	fromJobs := false
	switch {
	case plan.NeedBusyListed:
		busy = p.busyOldRunners(ctx)
	case plan.NeedBusy:
		if busy, fromJobs = p.busyFromJobs(ctx); !fromJobs {
			busy = p.busyRunners(ctx)
		}
	}
	if plan.NeedPods {
		phases = p.podPhases(ctx)
	}
	v = p.view(ctx, busy) // the calls took time: plan from now
	v.SafeOrder, v.PodPhases = safe, phases
	plan = p.planRollout(ctx, v)
	if fromJobs && plan.Blocked {
		// Every runner to stop is busy by the deliveries: a completion may
		// have been missed, so GitHub's list decides.
		v = p.view(ctx, p.busyRunners(ctx))
		v.SafeOrder, v.PodPhases = safe, phases
		plan = p.planRollout(ctx, v)
	}
	return p.withRegistrationOnly(plan)
}

// safeVictimsVersion marks pools that stop runners in safeVictims' order and
// do not count finishing runners (PoolRunner.Finishing) as capacity.
const safeVictimsVersion = "safe-victims"

// busyRunners asks GitHub which of the pool's registered runners are busy; when
// it cannot tell, every one counts as busy.
func (p *poolRun) busyRunners(ctx workflow.Context) map[string]bool {
	var names []string
	for _, r := range p.state.Runners {
		if r.Registered && !r.Stopping {
			names = append(names, r.Name)
		}
	}
	busy, err := p.askBusy(ctx, names, false)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot tell which runners are busy; treating all as busy", "pool", p.state.Spec.Name, "error", err)
		busy = map[string]bool{}
		for _, n := range names {
			busy[n] = true
		}
	}
	return busy
}

// askBusy asks GitHub which of the named runners are busy; fresh reads a list
// no older than the call (a rollout's one question per template).
func (p *poolRun) askBusy(ctx workflow.Context, names []string, fresh bool) (map[string]bool, error) {
	busy := map[string]bool{}
	in := calls.RunnerBusyInput{Scope: p.state.Spec.Scope, Names: names, Fresh: fresh}
	err := workflow.ExecuteActivity(githubOptions(ctx), calls.RunnerBusy, in).Get(ctx, &busy)
	return busy, err
}

// podPhases reads the pods of the pool's unregistered runners; when it cannot,
// every one counts as Running, so none is stopped before an idle runner.
func (p *poolRun) podPhases(ctx workflow.Context) map[string]corev1.PodPhase {
	var names []string
	for _, r := range p.state.Runners {
		if !r.Registered && !r.Stopping {
			names = append(names, r.Name)
		}
	}
	var phases map[string]corev1.PodPhase
	in := calls.RunnerPodPhasesInput{Namespace: p.state.Spec.Namespace, Pool: p.state.Spec.Name, Names: names}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.RunnerPodPhases, in).Get(ctx, &phases); err != nil {
		workflow.GetLogger(ctx).Warn("cannot read runner pods; treating all as running", "pool", p.state.Spec.Name, "error", err)
		phases = map[string]corev1.PodPhase{}
		for _, n := range names {
			phases[n] = corev1.PodRunning
		}
	}
	if phases == nil {
		phases = map[string]corev1.PodPhase{} // asked: no pod is not "not asked"
	}
	return phases
}

// withRegistrationOnly adds the registration-only runner to a plan: one while the
// pool is at zero (if the spec asks for it), none otherwise.
func (p *poolRun) withRegistrationOnly(plan PoolPlan) PoolPlan {
	want := p.state.Spec.RegistrationOnly && p.state.Desired() == 0
	have := false
	for _, r := range p.state.Runners {
		if r.RegistrationOnly && !r.Stopping {
			if want && !have {
				have = true
				continue
			}
			plan.Stop = append(plan.Stop, r.Name)
		}
	}
	plan.CreateRegistrationOnly = want && !have
	return plan
}

func (p *poolRun) apply(ctx workflow.Context, plan PoolPlan) error {
	stops := plan.Stop[:0:0]
	for _, name := range plan.Stop {
		if p.isStarting(name) && workflow.GetVersion(ctx, stopAfterStartVersion, workflow.DefaultVersion, 1) >= 1 {
			continue // stopped once its start is confirmed: the pool plans again then
		}
		stops = append(stops, name)
	}
	plan.Stop = stops
	for _, name := range plan.Stop {
		for i := range p.state.Runners {
			if p.state.Runners[i].Name == name {
				p.state.Runners[i].Stopping = true
			}
		}
		// A runner that already ended has its runner-done signal on the way.
		_ = workflow.SignalExternalWorkflow(ctx, contract.RunnerWorkflowID(p.state.Spec.Namespace, name), "", contract.SignalStop,
			StopRequest{Reason: "scale-down"}).Get(ctx, nil)
	}
	if len(plan.Stop) > 0 {
		p.events = append(p.events, fmt.Sprintf("ScalingDown: stopping %d runner(s): %s", len(plan.Stop), strings.Join(plan.Stop, ", ")))
	}
	if plan.Create == 0 && !plan.CreateRegistrationOnly {
		return nil
	}
	batch := p.startsInOneActivity(ctx)
	var starts []PoolRunner
	// Before runnerStartsVersion each runner's child start followed its name's
	// side effect at once; replaying those runs needs that order kept.
	add := func(r PoolRunner) {
		if batch {
			starts = append(starts, r)
		} else {
			p.startRunnerChild(ctx, r)
		}
		p.state.Runners = append(p.state.Runners, r)
	}
	if plan.CreateRegistrationOnly {
		name := p.newRunnerName(ctx)
		add(PoolRunner{Name: name, TemplateHash: p.state.Spec.TemplateHash, Created: workflow.Now(ctx), RegistrationOnly: true})
		p.events = append(p.events, "RegistrationOnly: created "+name+" to stay registered while the pool is at zero")
	}
	wakes := plan.Create > 0 && p.poolWakes(ctx, false)
	for range plan.Create {
		r := PoolRunner{Name: p.newRunnerName(ctx), TemplateHash: p.state.Spec.TemplateHash, Created: workflow.Now(ctx), PoolWakes: wakes && batch}
		if batch && p.state.Spec.VolumeHash != "" {
			p.state.acquireVolume(r.Name)
		}
		add(r)
	}
	if plan.Create > 0 {
		p.events = append(p.events, fmt.Sprintf("ScalingUp: created %d runner(s)", plan.Create))
	}
	if batch {
		p.startRunners(ctx, starts)
	}
	return nil
}

// wait blocks until a signal arrives, deferred creation is due, or blocked runners
// should be checked again.
func (p *poolRun) wait(ctx workflow.Context, plan PoolPlan) {
	wctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(wctx)
	p.listen(ctx, sel)
	for _, s := range p.starting {
		sel.AddFuture(s.started, func(workflow.Future) { p.onStarted(ctx, s) })
	}
	wake := plan.WakeAt
	for _, at := range []time.Time{p.volumeWake, p.checkWake} {
		if !at.IsZero() && (wake.IsZero() || at.Before(wake)) {
			wake = at
		}
	}
	if plan.Blocked {
		if retry := workflow.Now(ctx).Add(blockedRetry); wake.IsZero() || retry.Before(wake) {
			wake = retry
		}
	}
	if deadline, ok := p.deletionDeadline(); ok && (wake.IsZero() || deadline.Before(wake)) {
		wake = deadline
	}
	if p.pacedStatus(ctx) {
		if !p.statusDue.IsZero() && (wake.IsZero() || p.statusDue.Before(wake)) {
			wake = p.statusDue
		}
		if fired := p.timer.arm(ctx, wake); fired != nil {
			sel.AddFuture(fired, func(workflow.Future) {})
		}
	} else if !wake.IsZero() {
		sel.AddFuture(workflow.NewTimer(wctx, max(wake.Sub(workflow.Now(ctx)), time.Millisecond)), func(workflow.Future) {})
	}
	sel.Select(wctx)
	// Take every signal that is already here before planning again.
	for sel.HasPending() {
		sel.Select(wctx)
	}
}

// scaleDecided is when the autoscaler decided the scale the pool holds: a scale
// decided before a runner finished may still count that runner's job, even if
// it arrived after the runner-done signal (the autoscaler heard only some of
// the completions when it decided).
func (s *PoolState) scaleDecided() time.Time {
	if s.Scale != nil && !s.Scale.DecidedAt.IsZero() {
		return s.Scale.DecidedAt
	}
	return s.ScaleReceived
}
