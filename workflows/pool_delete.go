package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// DefaultPoolDeletionGrace is how long a deleted pool waits for its busy
// runners to finish their jobs before it deletes their pods (the worker's
// --pool-deletion-grace-period). An hour covers most jobs; GitHub's own
// limit for a job on a self-hosted runner is far longer, so an operator with
// long jobs raises it.
const DefaultPoolDeletionGrace = time.Hour

// poolDeletionVersion marks pools that, once deleted, bound their wait for
// busy runners, say so in an event, and remove the resource's finalizer
// (calls.PoolFinalizer) when they are done. Pools deleted before it
// drain without a bound and leave the finalizer to the watcher.
const poolDeletionVersion = "pool-deletion"

func (p *poolRun) deletionVersioned(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, poolDeletionVersion, workflow.DefaultVersion, 1) >= 1
}

// onDelete starts the pool's drain: every runner is stopped (plan), an idle
// one leaves GitHub before its pod goes, a busy one finishes its job first.
func (p *poolRun) onDelete(ctx workflow.Context) {
	if p.state.Deleting {
		return
	}
	p.state.Deleting = true
	if !p.deletionVersioned(ctx) {
		return
	}
	p.state.DeletingSince = workflow.Now(ctx)
	deadline, _ := p.deletionDeadline()
	p.events = append(p.events, fmt.Sprintf(
		"Deleting: removing %d runners; idle ones leave GitHub before their pods, busy ones finish their jobs first, until %s at the latest (--pool-deletion-grace-period %s)",
		len(p.state.Runners), deadline.UTC().Format(time.RFC3339), p.state.Spec.DeletionGrace()))
}

// DeletionGrace is how long the deleted pool waits for its busy runners.
func (s PoolSpec) DeletionGrace() time.Duration {
	if s.DeletionGracePeriod > 0 {
		return s.DeletionGracePeriod
	}
	return DefaultPoolDeletionGrace
}

// deletionDeadline is when a deleted pool stops waiting for its busy runners;
// ok is false while there is nothing to wait for.
func (p *poolRun) deletionDeadline() (time.Time, bool) {
	s := &p.state
	// DeletingSince is set only by runs of poolDeletionVersion (onDelete).
	if !s.Deleting || s.DeletingSince.IsZero() || s.DeletionForced {
		return time.Time{}, false
	}
	return s.DeletingSince.Add(s.Spec.DeletionGrace()), true
}

// forceDeletionAfterGrace deletes the pods of the runners still there at the
// deadline: their jobs are cancelled, which the operator chose by the grace
// period, and an event says so. Each runner's workflow then sees its pod
// gone and ends as usual.
func (p *poolRun) forceDeletionAfterGrace(ctx workflow.Context) {
	deadline, ok := p.deletionDeadline()
	if !ok || workflow.Now(ctx).Before(deadline) || len(p.state.Runners) == 0 {
		return
	}
	s := &p.state
	s.DeletionForced = true
	var pending []workflow.Future
	for _, r := range s.Runners {
		ref := calls.PodRef{Namespace: s.Spec.Namespace, Name: r.Name, Kind: s.Spec.Kind, Pool: s.Spec.Name, PoolToken: true}
		pending = append(pending, workflow.ExecuteActivity(kubeOptions(ctx), calls.DeleteRunnerPod, ref))
	}
	for _, f := range pending {
		if err := f.Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("cannot delete a runner's pod at the end of the deletion grace period", "pool", s.Spec.Name, "error", err)
		}
	}
	workflow.GetLogger(ctx).Warn("deletion grace period over: deleted the pods of the runners left", "pool", s.Spec.Name, "runners", len(pending))
	p.events = append(p.events, fmt.Sprintf(
		"DeletionGraceExpired: %d runners still ran after %s (--pool-deletion-grace-period); their pods are deleted, and any job on them is cancelled",
		len(pending), p.state.Spec.DeletionGrace()))
}

// releaseResource removes arcflow's finalizer from the pool's resource once
// its last runner is gone, so Kubernetes deletes it (and what it owns).
func (p *poolRun) releaseResource(ctx workflow.Context) {
	if !p.deletionVersioned(ctx) {
		return
	}
	s := &p.state
	ref := calls.PoolResourceRef{Namespace: s.Spec.Namespace, Kind: s.Spec.Kind, Name: s.Spec.Name}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.ReleasePoolResource, ref).Get(ctx, nil); err != nil {
		// The watcher removes it too when it finds no pool workflow for a
		// resource being deleted.
		workflow.GetLogger(ctx).Warn("cannot remove the pool's finalizer", "pool", s.Spec.Name, "error", err)
	}
}
