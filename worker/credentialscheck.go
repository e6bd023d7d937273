package worker

import (
	"context"
	"time"

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

func (w *ResourceWatcher) listerOf(kind string) cache.GenericLister {
	switch kind {
	case kindHRA:
		return w.hras
	case v1alpha1.KindRunnerSet:
		return w.rss
	}
	return w.rds
}
