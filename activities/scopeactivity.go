package activities

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
)

// LastArrivalInScope is the latest status.warm.lastArrivalTime of the other
// HorizontalRunnerAutoscalers in the namespace whose RunnerDeployment or
// RunnerSet registers runners in the scope: whether jobs still come anywhere
// in it, which one autoscaler cannot tell from its own jobs. A warm buffer
// that outlasted its own pool's jobs asks (workflows/autoscaler_scope.go);
// it is three list calls, at most once per scale-down delay.
func (k *Kubernetes) LastArrivalInScope(ctx context.Context, in ScopeActivityInput) (ScopeActivityOutput, error) {
	hras, err := k.list(ctx, v1alpha1.HorizontalRunnerAutoscalerResource, in.Namespace)
	if err != nil {
		return ScopeActivityOutput{}, err
	}
	rds, err := k.list(ctx, v1alpha1.RunnerDeploymentResource, in.Namespace)
	if err != nil {
		return ScopeActivityOutput{}, err
	}
	rss, err := k.list(ctx, v1alpha1.RunnerSetResource, in.Namespace)
	if err != nil {
		return ScopeActivityOutput{}, err
	}
	return lastArrivalIn(in, hras, rds, rss), nil
}

func (k *Kubernetes) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string) (cache.GenericLister, error) {
	list, err := k.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvr.Resource, namespace, err)
	}
	index := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range list.Items {
		if err := index.Add(&list.Items[i]); err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", gvr.Resource, namespace, err)
		}
	}
	return cache.NewGenericLister(index, gvr.GroupResource()), nil
}

// lastArrivalIn reads the listed HRAs of the scope. An HRA whose target is
// gone or unreadable is not of the scope: its autoscaler scales nothing.
func lastArrivalIn(in ScopeActivityInput, hras, rds, rss cache.GenericLister) ScopeActivityOutput {
	var out ScopeActivityOutput
	objs, _ := hras.List(labels.Everything()) // an indexer's List does not fail
	for _, obj := range objs {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		if runtime.DefaultUnstructuredConverter.FromUnstructured(obj.(*unstructured.Unstructured).Object, &hra) != nil || hra.Name == in.Except {
			continue
		}
		target, err := hraspec.ResolveTarget(&hra, rds, rss)
		if err != nil || hraspec.ScopeOf(hra.Namespace, target.Config).String() != in.Scope {
			continue
		}
		out.Autoscalers++
		if t := hra.Status.Warm; t != nil && t.LastArrivalTime != nil && t.LastArrivalTime.After(out.LastArrival) {
			out.LastArrival = t.LastArrivalTime.UTC()
		}
	}
	return out
}
