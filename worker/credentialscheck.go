package worker

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// CredentialsChecker validates a githubAPICredentialsFrom Secret
// (credentials.Resolver.Check).
type CredentialsChecker interface {
	Check(ctx context.Context, ref string) error
}

// credentialsRecheck is how soon a resource whose Secret was bad is looked at
// again: the watcher does not watch Secrets (runner token Secrets churn), so a
// fixed Secret is noticed within it.
const credentialsRecheck = 30 * time.Second

// credentialsProblem reports a bad Secret named by ref ("" is the worker's own
// credentials, always fine).
func (w *ResourceWatcher) credentialsProblem(ctx context.Context, ref string) error {
	if ref == "" || w.Credentials == nil {
		return nil
	}
	return w.Credentials.Check(ctx, ref)
}

// rechecks are the resources waiting to be looked at again, by kind/namespace/name.
type rechecks struct {
	mu      sync.Mutex
	pending map[string]bool
}

// recheckLater runs upsert again on the resource's newest version after
// credentialsRecheck, once however often it is asked for meanwhile.
func (w *ResourceWatcher) recheckLater(ctx context.Context, kind string, u *unstructured.Unstructured) {
	key := kind + "/" + u.GetNamespace() + "/" + u.GetName()
	w.rechecks.mu.Lock()
	defer w.rechecks.mu.Unlock()
	if w.rechecks.pending == nil {
		w.rechecks.pending = map[string]bool{}
	}
	if w.rechecks.pending[key] {
		return
	}
	w.rechecks.pending[key] = true
	time.AfterFunc(credentialsRecheck, func() {
		w.rechecks.mu.Lock()
		delete(w.rechecks.pending, key)
		w.rechecks.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if latest, err := w.listerOf(kind).ByNamespace(u.GetNamespace()).Get(u.GetName()); err == nil {
			w.upsert(ctx, kind, latest)
		}
	})
}

func (w *ResourceWatcher) listerOf(kind string) cache.GenericLister {
	switch kind {
	case kindHRA:
		return w.hras
	case v1alpha1.KindRunnerSet:
		return w.rss
	}
	return w.rds
}
