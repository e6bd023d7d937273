package worker

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// Every change of a resource goes through one rate-limited queue, keyed by
// the resource, not by the change: the worker syncs a resource's newest
// version from the cache, so a change that failed (Temporal down for the
// length of a chart upgrade) is retried with backoff until it lands, and
// changes made meanwhile fold into one. The queue also runs one sync of a
// resource at a time, where informer handlers, rechecks and the ARC gate used
// to race.

// resourceKey names a resource of one of the three kinds.
type resourceKey struct {
	kind, namespace, name string
}

func keyOf(kind string, u *unstructured.Unstructured) resourceKey {
	return resourceKey{kind: kind, namespace: u.GetNamespace(), name: u.GetName()}
}

// Retry bounds of a resource whose sync failed. The cap keeps a change made
// during an outage within about 10 s of Temporal's return, at one call per
// resource per 10 s while it is down.
const (
	syncRetryFirst = 500 * time.Millisecond
	syncRetryMax   = 10 * time.Second
	// resourceSyncWorkers sync different resources side by side (one
	// resource is never synced twice at once): a slow Temporal call for one
	// pool does not hold up the others.
	resourceSyncWorkers = 4
)

func newResourceQueue() workqueue.TypedRateLimitingInterface[resourceKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[resourceKey](syncRetryFirst, syncRetryMax),
		workqueue.TypedRateLimitingQueueConfig[resourceKey]{Name: "resources"})
}

// enqueue asks for a sync of the resource's newest version.
func (w *ResourceWatcher) enqueue(kind string, u *unstructured.Unstructured) {
	w.queue.Add(keyOf(kind, u))
}

// enqueueAll asks for a sync of every cached resource.
func (w *ResourceWatcher) enqueueAll() {
	w.enqueueCached(func(*unstructured.Unstructured) bool { return true })
}

// enqueueCached asks for a sync of the cached resources that want says,
// targets first so their autoscalers resolve them.
func (w *ResourceWatcher) enqueueCached(want func(*unstructured.Unstructured) bool) {
	for _, kind := range []string{v1alpha1.KindRunnerDeployment, v1alpha1.KindRunnerSet, kindHRA} {
		objs, err := w.listerOf(kind).List(labels.Everything())
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if u, ok := obj.(*unstructured.Unstructured); ok && want(u) {
				w.enqueue(kind, u)
			}
		}
	}
}

// runSyncs processes the queue until ctx ends. It starts after the caches
// have synced, so an HRA is never judged before its scale target is cached.
func (w *ResourceWatcher) runSyncs(ctx context.Context) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for range resourceSyncWorkers {
		go func() {
			for w.syncNext(ctx) {
			}
		}()
	}
}

func (w *ResourceWatcher) syncNext(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	if err := w.sync(ctx, key); err != nil && ctx.Err() == nil {
		w.Log.Warn("the resource's change did not reach its workflow; trying again",
			"kind", key.kind, "resource", key.namespace+"/"+key.name, "retries", w.queue.NumRequeues(key), "error", err)
		w.queue.AddRateLimited(key)
		return true
	}
	w.queue.Forget(key)
	w.waiting.remove(key)
	return true
}

// sync brings the workflow of one resource in line with the cache: an
// existing resource is upserted, a gone one is told to its workflow.
func (w *ResourceWatcher) sync(ctx context.Context, key resourceKey) error {
	obj, err := w.listerOf(key.kind).ByNamespace(key.namespace).Get(key.name)
	if errors.IsNotFound(err) {
		return w.deleted(ctx, key)
	}
	if err != nil {
		return err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	return w.upsert(ctx, key.kind, u)
}

// staleResyncPeriod is how often the cache is searched for resources whose
// last change has not reached their workflow (waitsForTemporal). The queue
// retries on its own; this catches what a queue lost with its process, such
// as a leader that stopped while Temporal was down.
const staleResyncPeriod = 30 * time.Second

func (w *ResourceWatcher) watchStale(ctx context.Context) {
	tick := time.NewTicker(staleResyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.enqueueStale()
		}
	}
}

// enqueueStale asks for a sync of each cached resource whose Accepted
// condition does not record its current generation as handed over.
func (w *ResourceWatcher) enqueueStale() {
	w.enqueueCached(waitsForTemporal)
}
