package worker

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// startupHRAs holds back the HRAs whose scale target the caches do not have
// yet. At start the three informers fill at their own pace, so an HRA can
// arrive before its RunnerDeployment: reporting InvalidSpec ("not found")
// for a target that exists would send an operator looking for a broken
// manifest. Once every cache has synced, the HRAs held back are looked at
// again, and a target still missing is reported then.
type startupHRAs struct {
	mu     sync.Mutex
	synced bool
	held   map[string]*unstructured.Unstructured
}

// hold keeps u for after the sync, when err says its target is missing and
// the caches have not synced yet.
func (s *startupHRAs) hold(u *unstructured.Unstructured, err error) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.synced {
		return false
	}
	if s.held == nil {
		s.held = map[string]*unstructured.Unstructured{}
	}
	s.held[u.GetNamespace()+"/"+u.GetName()] = u
	return true
}

// release marks the caches synced and returns the HRAs held back.
func (s *startupHRAs) release() []*unstructured.Unstructured {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.synced = true
	var out []*unstructured.Unstructured
	for _, u := range s.held {
		out = append(out, u)
	}
	s.held = nil
	return out
}

// upsertHeldHRAs runs the HRAs held back at start through upsert again, with
// the caches complete; the latest version in the cache wins over the one held.
func (w *ResourceWatcher) upsertHeldHRAs(ctx context.Context) {
	for _, u := range w.startup.release() {
		obj, err := w.hras.ByNamespace(u.GetNamespace()).Get(u.GetName())
		if err != nil {
			continue // deleted meanwhile
		}
		w.upsert(ctx, kindHRA, obj)
	}
}
