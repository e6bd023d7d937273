package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/workflows"
)

// LabelWorkerLiveness marks the Leases that say a worker process is alive.
const LabelWorkerLiveness = "arcflow.dev/worker-liveness"

// DefaultLivenessDuration is how long a worker's liveness Lease holds without
// a renewal; the worker renews it three times as often.
const DefaultLivenessDuration = 6 * time.Second

// Liveness keeps a worker process's Lease renewed while it runs. A killed
// process stops renewing it, which the leader sees (PollWatch) long before
// Temporal would: a scale set's poll heartbeats rarely, to be cheap when idle.
type Liveness struct {
	Kube      kubernetes.Interface
	Namespace string
	// Identity is the process's Temporal identity (identity.Process).
	Identity string
	Duration time.Duration
	Log      *slog.Logger
}

// leaseExpiry is when a liveness Lease expires unless renewed; false when the
// Lease does not say.
func leaseExpiry(s coordinationv1.LeaseSpec) (time.Time, bool) {
	if s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	return s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second), true
}

// livenessLeaseName is a worker's Lease: its identity is hashed, as it holds
// characters a name may not.
func livenessLeaseName(identity string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(identity))
	return fmt.Sprintf("arcflow-worker-%08x", h.Sum32())
}

// Run renews the Lease until ctx ends, then deletes it: a worker that stops
// cleanly has given its activities back already.
func (l *Liveness) Run(ctx context.Context) error {
	duration := l.Duration
	if duration <= 0 {
		duration = DefaultLivenessDuration
	}
	leases := l.Kube.CoordinationV1().Leases(l.Namespace)
	name := livenessLeaseName(l.Identity)
	ticker := time.NewTicker(duration / 3)
	defer ticker.Stop()
	for {
		if err := l.renew(ctx, leases, name, duration); err != nil && ctx.Err() == nil {
			l.Log.Warn("worker liveness lease not renewed", "lease", name, "error", err)
		}
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := leases.Delete(stop, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				l.Log.Warn("worker liveness lease not deleted; it expires", "lease", name, "error", err)
			}
			return nil
		case <-ticker.C:
		}
	}
}

// renew patches the Lease's renew time, or creates the Lease. A patch, not an
// update: the leader's Lease is the one updated, which the no-leader alert
// counts.
func (l *Liveness) renew(ctx context.Context, leases coordinationclient.LeaseInterface, name string, duration time.Duration) error {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(duration.Seconds())
	revision := strconv.Itoa(workflows.RunnerRevisionLatest)
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{AnnotationRunnerRevision: revision}},
		"spec":     map[string]any{"holderIdentity": l.Identity, "leaseDurationSeconds": seconds, "renewTime": now},
	})
	if err != nil {
		return fmt.Errorf("liveness patch: %w", err)
	}
	_, err = leases.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.Namespace, Labels: map[string]string{LabelWorkerLiveness: "true"},
			Annotations: map[string]string{AnnotationRunnerRevision: revision}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(l.Identity), LeaseDurationSeconds: ptr.To(seconds), AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	return err
}
