package worker

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AnnotationRunnerRevision on a worker's liveness Lease is the latest runner
// revision (workflows.RunnerRevision*) its code runs.
const AnnotationRunnerRevision = "arcflow.dev/runner-revision"

// A runner's revision is chosen by its pool, but any replica polling the
// runners' task queue may run the runner. While the worker rolls, an older
// replica runs a newer revision's runner on its own latest path, and a newer
// replica that later replays that history fails it (non-determinism) when the
// two paths differ. A change whose path differs only when an input says so
// (RunnerInput.Created) is safe once every live replica runs it: the liveness
// Leases say which revisions the live replicas run.

// revisionsCheckEvery bounds how often the Leases are listed.
const revisionsCheckEvery = 5 * time.Second

// WorkerRevisions tells whether every live worker replica runs a runner
// revision, from the replicas' liveness Leases.
type WorkerRevisions struct {
	Kube      kubernetes.Interface
	Namespace string
	Log       *slog.Logger

	mu        sync.Mutex
	checkedAt time.Time
	lowest    int // the lowest revision a live replica runs; noRevision: one says none
}

// noRevision is the revision of a replica whose Lease names none (an older
// release's), or of the replicas when their Leases cannot be read.
const noRevision = -1

// AllRun reports whether every live replica runs revision. A Lease that
// says no revision is an older release's; one that expired is a replica
// gone. Listing them fails safe, until the next check: false.
func (r *WorkerRevisions) AllRun(ctx context.Context, revision int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checkedAt) >= revisionsCheckEvery {
		lowest, err := r.lowestLive(ctx, time.Now())
		if err != nil {
			r.Log.Warn("cannot read the worker replicas' revisions; starts create no pods and runners' ends go alone", "error", err)
			lowest = noRevision
		}
		r.lowest, r.checkedAt = lowest, time.Now()
	}
	return r.lowest >= revision
}

func (r *WorkerRevisions) lowestLive(ctx context.Context, now time.Time) (int, error) {
	leases, err := r.Kube.CoordinationV1().Leases(r.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelWorkerLiveness + "=true"})
	if err != nil {
		return 0, fmt.Errorf("list worker liveness leases in %s: %w", r.Namespace, err)
	}
	lowest := int(^uint(0) >> 1)
	for _, l := range leases.Items {
		if expiry, known := leaseExpiry(l.Spec); !known || !now.Before(expiry) {
			continue
		}
		revision, err := strconv.Atoi(l.Annotations[AnnotationRunnerRevision])
		if err != nil {
			revision = noRevision // an older release's replica
		}
		lowest = min(lowest, revision)
	}
	return lowest, nil
}
