package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// The watchers build their informers from a ListWatch rather than through
// client-go's informer factories (informers, dynamicinformer): the factories link
// an informer and a lister for every built-in API group, about 120 packages whose
// code and init functions every arcflow process maps and runs for nothing.

// ForResource watches one custom resource in a namespace (all when
// empty). Its cache keeps objects without their managedFields and kubectl's
// last-applied annotation, which nobody here reads and which can double an
// object's size.
func ForResource(dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string) (cache.SharedIndexInformer, cache.GenericLister) {
	client := dyn.Resource(gvr).Namespace(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, o)
		},
	}
	informer := cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, dyn), &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: gvr.String(),
	})
	_ = informer.SetTransform(Strip) // fails only once started
	return informer, cache.NewGenericLister(informer.GetIndexer(), gvr.GroupResource())
}

// lastApplied is the annotation `kubectl apply` writes: the whole manifest again.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Strip is the informers' transform of custom resources: it drops the
// managedFields and the last-applied annotation, in place (client-go hands the
// transform an object nobody else holds yet). It is idempotent.
func Strip(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	if annotations := u.GetAnnotations(); annotations[lastApplied] != "" {
		delete(annotations, lastApplied)
		if len(annotations) == 0 {
			annotations = nil // removes the field
		}
		u.SetAnnotations(annotations)
	}
	return u, nil
}

// Run runs informers until ctx ends and waits for their caches to fill.
// The returned wait blocks until every informer has stopped.
func Run(ctx context.Context, informers ...cache.SharedIndexInformer) (synced bool, wait func()) {
	done := make(chan struct{}, len(informers))
	hasSynced := make([]cache.InformerSynced, 0, len(informers))
	for _, informer := range informers {
		go func() {
			defer func() { done <- struct{}{} }()
			informer.RunWithContext(ctx)
		}()
		hasSynced = append(hasSynced, informer.HasSynced)
	}
	synced = cache.WaitForCacheSync(ctx.Done(), hasSynced...)
	return synced, func() {
		for range informers {
			<-done
		}
	}
}
