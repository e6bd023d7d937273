package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ARCCheckPeriod is how often the resource watcher asks whether ARC's
// controller-manager still runs. A Lease expires by not being written, which no
// watch event reports, so a timer is needed whichever way the Lease is read;
// a Get of one Lease (and, while none is held, a List of ARC's few pods) every
// 5 s costs less than informers would (a watch each, and a cache of the pods),
// and keeps the handover to arcflow within 5 s of the Lease's expiry (plus
// arcClockSkew), well inside the 30 s it may take.
const ARCCheckPeriod = 5 * time.Second

// arcGate holds the watcher back from signalling while ARC's controller-manager
// runs. An upsert read-locks it from its decision to its signal, and a change of
// state write-locks it, so no upsert signals on a state that has just ended:
// one that started before the change finishes first, and is run again after it.
type arcGate struct {
	mu     sync.RWMutex
	status ARCStatus
	// reported are the resources (kind/namespace/name/generation) that got
	// this state's condition and event already, so a resource gets one event
	// per state, not one per upsert.
	reported map[string]bool
}

// arcHold read-locks the gate for an upsert that is about to signal; the
// caller defers release. With the gate blocking, the resource gets the state's
// Accepted=False condition and event, once, and blocked is true.
func (w *ResourceWatcher) arcHold(ctx context.Context, kind string, u *unstructured.Unstructured, unsupported []string) (release func(), blocked bool) {
	if w.ARC == nil {
		return func() {}, false
	}
	g := &w.arcGate
	g.mu.RLock()
	if !g.status.Active {
		return g.mu.RUnlock, false
	}
	status := g.status
	g.mu.RUnlock()
	// Written under the write lock, so two upserts of one resource (its own
	// and its target's refresh) record one event between them.
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.status.Active && g.status.Cause == status.Cause {
		key := fmt.Sprintf("%s/%s/%s/%d", kind, u.GetNamespace(), u.GetName(), u.GetGeneration())
		if !g.reported[key] {
			g.reported[key] = true
			w.setConditions(ctx, kind, u, metav1.ConditionFalse, g.status.Reason(), g.status.Message, unsupported)
		}
	}
	return func() {}, true
}

// startARCGate runs the first check before the informers deliver anything, so
// no resource is signalled before the watcher knows whether ARC runs. A check
// that keeps failing leaves the gate closed (arcCauseUnknown).
func (w *ResourceWatcher) startARCGate(ctx context.Context) {
	var err error
	for attempt := range 3 {
		var status ARCStatus
		if status, err = w.ARC.Check(ctx); err == nil {
			w.setARCStatus(status)
			return
		}
		w.Log.Warn("cannot tell whether ARC's controller-manager runs", "attempt", attempt+1, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	w.setARCStatus(w.ARC.arcUnknown(err))
}

// watchARC checks every ARCCheckPeriod and, when the state changes, syncs every
// cached resource again: the pools and autoscalers start once ARC
// is gone, and the resources say so again if it comes back. A failed check
// keeps the last state.
func (w *ResourceWatcher) watchARC(ctx context.Context) {
	tick := time.NewTicker(ARCCheckPeriod)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		status, err := w.ARC.Check(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				w.Log.Warn("cannot tell whether ARC's controller-manager runs; keeping the last answer", "error", err)
			}
			failing = true
			continue
		}
		failing = false
		if w.setARCStatus(status) {
			w.enqueueAll()
		}
	}
}

// setARCStatus records a check's answer and reports whether the state changed.
func (w *ResourceWatcher) setARCStatus(status ARCStatus) bool {
	g := &w.arcGate
	g.mu.Lock()
	defer g.mu.Unlock()
	first := g.reported == nil
	if !first && g.status.Active == status.Active && g.status.Cause == status.Cause {
		return false // same state: its message, and the conditions written with it, stay
	}
	was := g.status
	g.status, g.reported = status, map[string]bool{}
	switch {
	case first && status.Active:
		w.Log.Warn("ARC is still in charge: arcflow starts no pool or autoscaler until it is gone", "cause", status.Cause, "reason", status.Message)
	case first:
	case status.Active && !was.Active:
		w.Log.Error("ARC is back (its controller or its admission webhooks): arcflow starts no pool or autoscaler, and those it runs keep running beside it; stop ARC, or run `arcflow drain`",
			"cause", status.Cause, "reason", status.Message)
	case status.Active:
		w.Log.Warn("ARC is still in charge", "cause", status.Cause, "reason", status.Message)
	default:
		w.Log.Info("ARC is gone: arcflow takes over its resources", "was", was.Message)
	}
	return true
}
