//go:build !webhookonly

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// drainer holds arcflow's autoscalers and pools at 0 through the workflows'
// existing signals (force-scale, scale), so a drain needs no change to them,
// and watches the runners go.
type drainer struct {
	tc      client.Client
	kube    kubernetes.Interface
	dynamic dynamic.Interface
	opts    *drainOptions
	out     io.Writer
	// held are the workflow IDs already told to hold 0.
	held map[string]bool
	// handedBack are the autoscalers whose queued jobs this drain handed
	// back to ARC (drainhandback.go).
	handedBack map[string]bool
}

// drainTargets are the running autoscalers and pools of the drained namespaces.
type drainTargets struct {
	autoscalers map[string]*workflows.AutoscalerState // by workflow ID; nil state when its query failed
	pools       map[string]*workflows.PoolState
	// scaled are the pool IDs an autoscaler scales.
	scaled map[string]bool
}

// listTargets lists the running autoscaler and pool workflows and queries their
// states. A workflow that ended between the list and the query is left out.
func (d *drainer) listTargets(ctx context.Context) (*drainTargets, error) {
	t := &drainTargets{autoscalers: map[string]*workflows.AutoscalerState{}, pools: map[string]*workflows.PoolState{}, scaled: map[string]bool{}}
	ids, err := running(ctx, d.tc, contract.AutoscalerWorkflowType, "hra/", d.opts.namespace)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		var s workflows.AutoscalerState
		if err := query(ctx, d.tc, id, &s); err != nil {
			if isNotFound(err) {
				continue
			}
			t.autoscalers[id] = nil // held all the same; its target is not known
			continue
		}
		t.autoscalers[id] = &s
		t.scaled[contract.PoolWorkflowID(s.Spec.Namespace, s.Spec.TargetKind, s.Spec.TargetName)] = true
	}
	if ids, err = running(ctx, d.tc, "PoolWorkflow", "pool/", d.opts.namespace); err != nil {
		return nil, err
	}
	for _, id := range ids {
		var s workflows.PoolState
		if err := query(ctx, d.tc, id, &s); err != nil {
			if isNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("query %s: %w", id, err)
		}
		t.pools[id] = &s
	}
	return t, nil
}

// hold tells every autoscaler and unscaled pool not yet held to hold 0.
func (d *drainer) hold(ctx context.Context, t *drainTargets) error {
	for _, id := range slices.Sorted(maps.Keys(t.autoscalers)) {
		if d.held[id] {
			continue
		}
		// HandBack: while it holds, the autoscaler hands the jobs queued
		// later back to ARC itself (drainhandback.go).
		force := workflows.ForceScale{Replicas: 0, Duration: d.opts.hold.String(), HandBack: true}
		if err := d.signal(ctx, id, contract.SignalForceScale, force); err != nil {
			return err
		}
		fmt.Fprintf(d.out, "drain: %s: holding 0 replicas for %s (force-scale), handing its queued jobs back to ARC\n", id, d.opts.hold)
	}
	for _, id := range slices.Sorted(maps.Keys(t.pools)) {
		if d.held[id] || t.scaled[id] {
			continue
		}
		if err := d.signal(ctx, id, contract.SignalScale, workflows.ScaleRequest{Replicas: 0}); err != nil {
			return err
		}
		fmt.Fprintf(d.out, "drain: %s: scaled to 0 (no autoscaler scales it)\n", id)
	}
	return d.holdListeners(ctx, true)
}

// holdListeners holds or resumes every scale set listener of the drained
// namespaces: a held one closes its session, so the service assigns the set's
// jobs to nobody's runners until a listener (arcflow's after --undo, or
// another) opens one again.
func (d *drainer) holdListeners(ctx context.Context, held bool) error {
	ids, err := running(ctx, d.tc, contract.ScaleSetWorkflowType, "scaleset/", d.opts.namespace)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if held && d.held[id] {
			continue
		}
		if err := d.signal(ctx, id, contract.SignalHold, contract.Hold{Held: held}); err != nil {
			return err
		}
		if held {
			fmt.Fprintf(d.out, "drain: %s: session closed; the set's jobs wait in GitHub for a listener\n", id)
		} else {
			fmt.Fprintf(d.out, "drain --undo: %s: listening again\n", id)
		}
	}
	return nil
}

// signal sends one signal and marks the workflow held; one that ended in the
// meantime has nothing left to hold.
func (d *drainer) signal(ctx context.Context, id, name string, arg any) error {
	err := d.tc.SignalWorkflow(ctx, id, "", name, arg)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("signal %s to %s: %w", name, id, err)
	}
	d.held[id] = true
	return nil
}

// undoHold ends the hold: an autoscaler's force-scale is replaced by one of its
// current count that ends in a second (so nothing is scaled down meanwhile),
// and a pool without an autoscaler that has a scale of its own is scaled back to
// its spec's replicas.
func (d *drainer) undoHold(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	t, err := d.listTargets(ctx)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(t.autoscalers)) {
		s, replicas := t.autoscalers[id], 0
		if s != nil && s.Desired != nil {
			replicas = *s.Desired
		}
		if err := d.signal(ctx, id, contract.SignalForceScale, workflows.ForceScale{Replicas: replicas, Duration: "1s"}); err != nil {
			return err
		}
		fmt.Fprintf(d.out, "drain --undo: %s: hold ended; the autoscaler decides again\n", id)
	}
	for _, id := range slices.Sorted(maps.Keys(t.pools)) {
		s := t.pools[id]
		if t.scaled[id] || s.Scale == nil {
			continue
		}
		if err := d.signal(ctx, id, contract.SignalScale, workflows.ScaleRequest{Replicas: s.Spec.Replicas}); err != nil {
			return err
		}
		fmt.Fprintf(d.out, "drain --undo: %s: scaled back to its spec.replicas, %d\n", id, s.Spec.Replicas)
	}
	if err := d.holdListeners(ctx, false); err != nil {
		return err
	}
	if err := d.undoHandBack(ctx); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "drain --undo: %d autoscalers and %d pools in %s resume\n", len(t.autoscalers), len(t.pools), d.opts.where())
	return nil
}

func isNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}
