package workflows

import (
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
	"go.temporal.io/sdk/workflow"
)

func (a *autoscalerRun) listen(ctx workflow.Context, sel workflow.Selector) {
	sel.AddReceive(a.jobs, func(c workflow.ReceiveChannel, _ bool) {
		var ev contract.JobEvent
		c.Receive(ctx, &ev)
		a.tellRunner(ctx, ev)
		if !a.quietStart(ctx, ev) {
			a.woke = true
			a.onJob(ctx, ev)
		}
	})
	sel.AddReceive(a.batches, func(c workflow.ReceiveChannel, _ bool) {
		var batch []contract.JobEvent
		c.Receive(ctx, &batch)
		for _, ev := range batch {
			a.tellRunner(ctx, ev)
			if !a.quietStart(ctx, ev) {
				a.woke = true
				a.onJob(ctx, ev)
			}
		}
	})
	sel.AddReceive(a.specs, func(c workflow.ReceiveChannel, _ bool) {
		var spec contract.AutoscalerSpec
		c.Receive(ctx, &spec)
		a.woke = true
		a.onSpec(spec)
	})
	sel.AddReceive(a.forces, func(c workflow.ReceiveChannel, _ bool) {
		var f ForceScale
		c.Receive(ctx, &f)
		a.woke = true
		a.onForce(ctx, f)
	})
	sel.AddReceive(a.deletes, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		a.woke = true
		a.state.Deleting = true
	})
	sel.AddReceive(a.scaleSets, func(c workflow.ReceiveChannel, _ bool) {
		var m contract.ScaleSetMessage
		c.Receive(ctx, &m)
		a.woke = true
		a.onScaleSet(ctx, m)
	})
	a.listenWarm(ctx, sel)
}

// onJob applies the first event after a quiet batch window at once, so a single job
// is not delayed, and collects the following ones until the window closes.
func (a *autoscalerRun) onJob(ctx workflow.Context, ev contract.JobEvent) {
	now := workflow.Now(ctx)
	s := &a.state
	if len(s.Pending) == 0 && !now.Before(s.LastApplied.Add(s.Spec.BatchWindow)) {
		a.applyJob(ctx, ev, now)
		s.LastApplied = now
		return
	}
	s.Pending = append(s.Pending, ev)
}

func (a *autoscalerRun) onSpec(spec contract.AutoscalerSpec) {
	// An older generation is stale; the same one may carry a changed target.
	if spec.Generation != 0 && spec.Generation < a.state.Spec.Generation {
		return
	}
	if a.handBack {
		spec.Capacity = withoutHandedBack(spec.Capacity)
	}
	a.state.Spec = spec.WithDefaults()
}

func (a *autoscalerRun) onForce(ctx workflow.Context, f ForceScale) {
	d, err := time.ParseDuration(f.Duration)
	if err != nil || d <= 0 || f.Replicas < 0 {
		workflow.GetLogger(ctx).Warn("force-scale ignored", "hra", a.state.Spec.Name, "error", errBadForceScale, "input", f)
		return
	}
	f.Since = workflow.Now(ctx)
	f.Until = f.Since.Add(d)
	a.state.Force = &f
	workflow.GetLogger(ctx).Info("force-scale accepted", "hra", a.state.Spec.Name, "replicas", f.Replicas, "until", f.Until)
}

func (a *autoscalerRun) drainSignals(ctx workflow.Context) {
	a.drainWarm()
	for {
		var ev contract.JobEvent
		var batch []contract.JobEvent
		var spec contract.AutoscalerSpec
		var f ForceScale
		var m contract.ScaleSetMessage
		switch {
		case a.scaleSets.ReceiveAsync(&m):
			a.onScaleSet(ctx, m)
		case a.jobs.ReceiveAsync(&ev):
			a.state.Pending = append(a.state.Pending, ev)
		case a.batches.ReceiveAsync(&batch):
			a.state.Pending = append(a.state.Pending, batch...)
		case a.specs.ReceiveAsync(&spec):
			a.onSpec(spec)
		case a.forces.ReceiveAsync(&f):
			a.onForce(ctx, f)
		case a.deletes.ReceiveAsync(nil):
			a.state.Deleting = true
		default:
			return
		}
	}
}
