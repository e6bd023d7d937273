package worker

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// upsertScaleSet signal-with-starts the listener of a pool's runner scale set
// (arcflow.dev/scale-set) with the set's name, the pool's labels, and what its
// HRA says: the autoscaler that hears the demand, and maxReplicas, the
// capacity each poll sends.
func (w *ResourceWatcher) upsertScaleSet(ctx context.Context, kind string, u *unstructured.Unstructured, spec workflows.PoolSpec) error {
	return w.signalListener(ctx, w.listenerSpec(kind, u, spec))
}

// signalListener signal-with-starts a pool's listener with its spec.
func (w *ResourceWatcher) signalListener(ctx context.Context, listener workflows.ScaleSetSpec) error {
	id := contract.ScaleSetWorkflowID(listener.Namespace, listener.Kind, listener.Pool)
	_, err := w.Temporal.SignalWithStartWorkflow(ctx, id, contract.SignalSpec, listener, client.StartWorkflowOptions{
		ID: id, TaskQueue: contract.ControlTaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.SearchAttrKind.ValueSet("scaleset"),
			contract.SearchAttrPool.ValueSet(listener.Namespace+"/"+listener.Pool),
			contract.SearchAttrScope.ValueSet(listener.Scope.String()),
		),
	}, workflows.ScaleSetWorkflow, workflows.ScaleSetInput{Spec: listener})
	if err != nil {
		w.listenerSpecs.forget(id)
		return fmt.Errorf("signal the scale set listener %s: %w", id, err)
	}
	w.listenerSpecs.remember(id, listener)
	return nil
}

// listenerSpec is what a pool's listener is told: the pool's set, and its
// HRA's autoscaler, maxReplicas and minReplicas (for the gha_ metrics).
func (w *ResourceWatcher) listenerSpec(kind string, u *unstructured.Unstructured, spec workflows.PoolSpec) workflows.ScaleSetSpec {
	listener := workflows.ScaleSetSpec{
		Namespace: spec.Namespace, Kind: kind, Pool: spec.Name, Scope: spec.Scope,
		Name: spec.ScaleSet.Name, RunnerGroup: spec.ScaleSet.RunnerGroup, Labels: scaleSetLabels(spec),
		MaxRunners: spec.Replicas, Generation: u.GetGeneration(),
	}
	if hra, ok := w.hraOf(kind, spec.Namespace, spec.Name); ok {
		listener.Autoscaler = contract.AutoscalerWorkflowID(hra.Namespace, hra.Name)
		if hra.Spec.MaxReplicas != nil {
			listener.MaxRunners = *hra.Spec.MaxReplicas
		}
		if hra.Spec.MinReplicas != nil {
			listener.MinRunners = *hra.Spec.MinReplicas
		}
	}
	return listener
}

// scaleSetLabels are what the set is created with: its name, then the
// runners' labels (the service fixes them at creation).
func scaleSetLabels(spec workflows.PoolSpec) []string {
	out := []string{spec.ScaleSet.Name}
	for _, l := range spec.Runner.Spec.Labels {
		if !slices.ContainsFunc(out, func(have string) bool { return strings.EqualFold(have, l) }) {
			out = append(out, l)
		}
	}
	return out
}

// stopScaleSet tells a pool's listener, if it has one, to close its session
// and end: the pool is deleted, or no longer joins a set.
func (w *ResourceWatcher) stopScaleSet(ctx context.Context, kind, namespace, name string) error {
	id := contract.ScaleSetWorkflowID(namespace, kind, name)
	w.listenerSpecs.forget(id)
	err := w.Temporal.SignalWorkflow(ctx, id, "", contract.SignalDelete, nil)
	var notFound *serviceerror.NotFound
	if err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("signal delete to the scale set listener %s: %w", id, err)
	}
	return nil
}

// hraOf is the HRA that scales a pool, from the cache.
func (w *ResourceWatcher) hraOf(kind, namespace, name string) (v1alpha1.HorizontalRunnerAutoscaler, bool) {
	objs, err := w.hras.ByNamespace(namespace).List(labels.Everything())
	if err != nil {
		return v1alpha1.HorizontalRunnerAutoscaler{}, false
	}
	for _, obj := range objs {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		u, ok := obj.(*unstructured.Unstructured)
		if ok && runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra) == nil &&
			hra.Spec.TargetKind() == kind && hra.Spec.ScaleTargetRef.Name == name && u.GetDeletionTimestamp() == nil {
			return hra, true
		}
	}
	return v1alpha1.HorizontalRunnerAutoscaler{}, false
}

// refreshScaleSetOf re-sends the listener spec of an HRA's target when it
// joins a scale set: the HRA's maxReplicas is the set's capacity.
func (w *ResourceWatcher) refreshScaleSetOf(ctx context.Context, hra *v1alpha1.HorizontalRunnerAutoscaler) error {
	kind := hra.Spec.TargetKind()
	lister := w.rds
	if kind == v1alpha1.KindRunnerSet {
		lister = w.rss
	}
	obj, err := lister.ByNamespace(hra.Namespace).Get(hra.Spec.ScaleTargetRef.Name)
	if err != nil {
		return nil // no target yet: its own upsert sends the spec
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetAnnotations()[v1alpha1.ScaleSetAnnotation] == "" {
		return nil
	}
	spec, err := w.poolSpec(kind, u)
	if err != nil || spec.ScaleSet == nil {
		return nil // the pool's own upsert reports it
	}
	// A pool's change re-queues its HRA, whose listener spec is then the one
	// the pool's upsert just sent: only what the HRA changed is sent again.
	listener := w.listenerSpec(kind, u, spec)
	if w.listenerSpecs.sent(contract.ScaleSetWorkflowID(spec.Namespace, kind, spec.Name), listener) {
		return nil
	}
	return w.signalListener(ctx, listener)
}

// scaleSetFollows keeps a pool's listener in step with its annotation: started
// or updated while the pool joins a set, stopped once it no longer does (its
// status still names a set).
func (w *ResourceWatcher) scaleSetFollows(ctx context.Context, kind string, u *unstructured.Unstructured, spec workflows.PoolSpec) error {
	if spec.ScaleSet != nil {
		return w.upsertScaleSet(ctx, kind, u, spec)
	}
	if id, _, _ := unstructured.NestedInt64(u.Object, "status", "scaleSetId"); id != 0 {
		return w.stopScaleSet(ctx, kind, u.GetNamespace(), u.GetName())
	}
	return nil
}

// sentListenerSpecs remembers the spec each listener was last sent, so the HRA
// path does not send the pool path's spec a second time. The pool path always
// sends (it is what starts a lost listener again).
type sentListenerSpecs struct {
	mu   sync.Mutex
	last map[string]workflows.ScaleSetSpec
}

func (s *sentListenerSpecs) sent(id string, spec workflows.ScaleSetSpec) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.last[id]
	return ok && reflect.DeepEqual(last, spec)
}

func (s *sentListenerSpecs) remember(id string, spec workflows.ScaleSetSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]workflows.ScaleSetSpec{}
	}
	s.last[id] = spec
}

func (s *sentListenerSpecs) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, id)
}
