package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Registration-timeout backoff: 10 s after the first failure, doubling to 10 min.
const (
	createBackoffMin = 10 * time.Second
	createBackoffMax = 10 * time.Minute
)

func (p *poolRun) listen(ctx workflow.Context, sel workflow.Selector) {
	sel.AddReceive(p.specs, func(c workflow.ReceiveChannel, _ bool) {
		var spec PoolSpec
		c.Receive(ctx, &spec)
		p.onSpec(ctx, spec)
	})
	sel.AddReceive(p.scales, func(c workflow.ReceiveChannel, _ bool) {
		var scale ScaleRequest
		c.Receive(ctx, &scale)
		p.onScale(ctx, scale)
	})
	sel.AddReceive(p.deletes, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		p.onDelete(ctx)
	})
	sel.AddReceive(p.registered, func(c workflow.ReceiveChannel, _ bool) {
		var r RunnerRegistered
		c.Receive(ctx, &r)
		p.onRegistered(ctx, r)
	})
	sel.AddReceive(p.done, func(c workflow.ReceiveChannel, _ bool) {
		var d RunnerDone
		c.Receive(ctx, &d)
		p.onDone(ctx, d)
	})
	sel.AddReceive(p.doneGrouped, func(c workflow.ReceiveChannel, _ bool) {
		var ds []RunnerDone
		c.Receive(ctx, &ds)
		p.onDones(ctx, ds)
	})
	sel.AddReceive(p.scaleSetIDs, func(c workflow.ReceiveChannel, _ bool) {
		var id contract.ScaleSetID
		c.Receive(ctx, &id)
		p.onScaleSetID(ctx, id)
	})
}

// onSpec takes a newer spec; a stale or repeated one (same or older generation)
// changes nothing, so the watcher may send it again safely.
func (p *poolRun) onSpec(ctx workflow.Context, spec PoolSpec) {
	if spec.Generation != 0 && spec.Generation <= p.state.Spec.Generation {
		return
	}
	if spec.TemplateHash != p.state.Spec.TemplateHash {
		p.events = append(p.events, "RollingUpdate: runner template changed; replacing runners")
		workflow.GetLogger(ctx).Info("template changed; rolling the pool", "pool", spec.Name)
	}
	p.state.Spec = spec
}

func (p *poolRun) onScale(ctx workflow.Context, scale ScaleRequest) {
	p.state.ScaleReceived = workflow.Now(ctx)
	p.markRunning(ctx, scale)
	p.markFinishing(ctx, scale.Finished)
	p.state.hearFinished(scale.Finished)
	p.noteStarts(scale.Warm)
	p.noteFailedJobs(ctx, scale.Failed)
	scale.Finished, scale.Running, scale.Failed = nil, nil, nil // applied; the state keeps only the counts
	if cur := p.state.Scale; cur != nil && scale.EffectiveTime.Before(cur.EffectiveTime) {
		scale.EffectiveTime = cur.EffectiveTime // effective time only moves forward
	}
	p.state.Scale = &scale
}

func (p *poolRun) onRegistered(ctx workflow.Context, r RunnerRegistered) {
	for i := range p.state.Runners {
		if p.state.Runners[i].Name == r.Name {
			p.noteReady(workflow.Now(ctx), p.state.Runners[i])
			p.state.Runners[i].Registered = true
			if p.readyProvesNothing(ctx) {
				continue
			}
			p.state.TimeoutStreak, p.state.CreateNotBefore, p.state.LastFailure = 0, time.Time{}, ""
		}
	}
}

// markFinishing marks the named runners of an ephemeral pool as finishing:
// their jobs completed, so they exit on their own. Names of runners the pool
// does not have (another pool's runner took the job, or it already ended) are
// ignored.
func (p *poolRun) markFinishing(ctx workflow.Context, names []string) {
	if len(names) == 0 || !p.state.Spec.Ephemeral ||
		workflow.GetVersion(ctx, safeVictimsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	for _, name := range names {
		for i := range p.state.Runners {
			if r := &p.state.Runners[i]; r.Name == name && !r.Stopping && !r.RegistrationOnly {
				r.Finishing = true
			}
		}
	}
}

// onDones takes runners' ends grouped into one signal (SignalRunnersDone)
// as it takes each alone.
func (p *poolRun) onDones(ctx workflow.Context, ds []RunnerDone) {
	for _, d := range ds {
		p.onDone(ctx, d)
	}
}

// onDone forgets a runner that ended. A repeat for a runner already forgotten
// changes nothing: a runner's signal may come twice (see notifyPool).
func (p *poolRun) onDone(ctx workflow.Context, d RunnerDone) {
	kept := p.state.Runners[:0]
	finishing, registeredByJob, busy := false, false, false
	for _, r := range p.state.Runners {
		if r.Name != d.Name {
			kept = append(kept, r)
		} else {
			finishing, registeredByJob, busy = r.Finishing, p.state.registeredByJob(r), r.Busy
			p.noteEnded(r)
			p.noteLostRunner(ctx, r, d)
		}
	}
	known := len(kept) < len(p.state.Runners)
	p.state.Runners = kept
	if !known {
		return
	}
	p.state.releaseVolume(d.Name, workflow.Now(ctx))
	switch d.Reason {
	case EndCompleted:
		switch {
		case finishing: // the autoscaler counted this job's end already
		case p.countsUnheard(ctx):
			bound := max(unheardCompletionBound, p.state.Scale.NamesWithin)
			p.state.Unheard = append(p.state.Unheard, UnheardRunner{Name: d.Name, Until: workflow.Now(ctx).Add(bound)})
		default:
			p.state.LastJobFinished = workflow.Now(ctx)
		}
	case EndRegistrationTimeout, EndCreateFailed, EndPodUnschedulable:
		p.backOff(ctx, d)
	case EndPodFailed, EndPodExited:
		// A pod that ended before its runner registered is a runner that cannot
		// start (a crashing image, a bad command): replacing it at once would
		// loop as fast as the pods fail. Runs from before this change replay
		// without the backoff they were recorded without.
		// A runner a job's delivery showed registered did start, even if it
		// had not seen itself listed yet (patient registration checks).
		failedStart := !d.started() && !registeredByJob
		// A JIT runner's failed pod says runner-died (its process exited
		// non-zero); what Kubernetes took (OOM, eviction, a lost node) is no
		// failure to start.
		if !failedStart && d.Reason == EndPodFailed && !finishing && !busy && (d.Cause == "" || d.Cause == calls.CauseRunnerDied) {
			failedStart = p.jitFailedBeforeAJob(ctx)
		}
		if failedStart && workflow.GetVersion(ctx, failedStartBackoffVersion, workflow.DefaultVersion, 1) >= 1 {
			p.backOff(ctx, d)
		}
	}
}

// failedStartBackoffVersion marks pools that back off after a runner whose pod
// ended before it registered, as after a registration timeout.
const failedStartBackoffVersion = "backoff-failed-start"

// backOff defers the next runner after one that could not start: 10 s, doubling
// with each failure in a row up to 10 minutes; the first runner that registers
// resets it (onRegistered). The failed runner's slot is free at once.
func (p *poolRun) backOff(ctx workflow.Context, d RunnerDone) {
	p.state.TimeoutStreak++
	backoff := min(createBackoffMin<<min(p.state.TimeoutStreak-1, 10), createBackoffMax)
	p.state.CreateNotBefore = workflow.Now(ctx).Add(backoff)
	if workflow.GetVersion(ctx, runnerFailureStatusVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		p.events = append(p.events, "RunnerFailed: "+d.Name+" ended with "+d.Reason+"; next runner after "+backoff.String())
		return
	}
	// The status says it, and the watcher's RunnersFailing condition and its
	// one event; one event per failed runner would flood a broken pool's events.
	p.state.LastFailure = d.Reason
	countFailure(&p.state.Failures, d.Reason)
}

// runnerFailureStatusVersion marks pools that report runners that cannot start
// in their status (failingRunners, lastRunnerFailure, runnerFailures) instead of
// an event per failure.
const runnerFailureStatusVersion = "runner-failure-status"

func countFailure(f *v1alpha1.RunnerFailures, reason string) {
	switch reason {
	case EndCreateFailed:
		f.CreateFailed++
	case EndRegistrationTimeout:
		f.RegistrationTimeout++
	case EndPodFailed:
		f.PodFailed++
	case EndPodExited:
		f.PodExited++
	case EndPodUnschedulable:
		f.PodUnschedulable++
	}
}

// drainSignals applies every buffered signal before continue-as-new.
func (p *poolRun) drainSignals(ctx workflow.Context) {
	for {
		var spec PoolSpec
		var scale ScaleRequest
		var reg RunnerRegistered
		var done RunnerDone
		var dones []RunnerDone
		var scaleSet contract.ScaleSetID
		switch {
		case p.scaleSetIDs.ReceiveAsync(&scaleSet):
			p.onScaleSetID(ctx, scaleSet)
		case p.specs.ReceiveAsync(&spec):
			p.onSpec(ctx, spec)
		case p.scales.ReceiveAsync(&scale):
			p.onScale(ctx, scale)
		case p.deletes.ReceiveAsync(nil):
			p.onDelete(ctx)
		case p.registered.ReceiveAsync(&reg):
			p.onRegistered(ctx, reg)
		case p.done.ReceiveAsync(&done):
			p.onDone(ctx, done)
		case p.doneGrouped.ReceiveAsync(&dones):
			p.onDones(ctx, dones)
		default:
			return
		}
	}
}
