package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/arcflow/arcflow/internal/identity"
)

// DefaultLeaseDuration is how long a leader's Lease holds without renewal. The
// leader renews it every tenth of that and gives up leading after two thirds of
// it without a renewal (RenewDeadline 4 s), so two replicas never both lead. A
// SIGKILLed leader cannot release it: another replica takes over the watchers
// once it expires, within HandoverWithin (8.6 s) of the kill. client-go's usual
// 15 s lease would take 15 to about 22 s. A stopped (SIGTERM) leader releases
// the Lease, and the handover is immediate. The cost of the shorter lease: one
// Lease write per 0.6 s by the leader and one read per 0.6 to 1.3 s by each other
// replica, and an API server that cannot be reached for 4 s makes the leader exit
// (it restarts as a candidate).
const DefaultLeaseDuration = 6 * time.Second

// RetryPeriod is how often a leader renews its Lease and another replica checks
// it, for a given lease duration.
func RetryPeriod(lease time.Duration) time.Duration { return lease / 10 }

// HandoverWithin is the longest a SIGKILLed leader's Lease takes to reach another
// replica, by client-go's rules: a candidate counts the lease from when it saw the
// last renewal, which it checks every RetryPeriod stretched by up to 2.2 times
// (client-go's jitter), so it may see the renewal one check late and take the
// expired lease one check after expiry.
func HandoverWithin(lease time.Duration) time.Duration {
	check := RetryPeriod(lease) * 22 / 10
	return lease + 2*check
}

// LeaderElection configures which worker replica runs the Kubernetes watchers.
type LeaderElection struct {
	Enabled       bool
	Namespace     string
	ID            string // ARC's --leader-election-id
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// RunWhileLeader runs fn while this process holds the lease, so several worker
// replicas never fight over the same signals. Without election it just runs fn.
func RunWhileLeader(ctx context.Context, kube kubernetes.Interface, cfg LeaderElection, log *slog.Logger, fn func(context.Context)) error {
	if !cfg.Enabled {
		fn(ctx)
		return nil
	}
	self, err := identity.Process()
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: cfg.ID, Namespace: cfg.Namespace},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: self},
	}
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading: running the Kubernetes watchers", "identity", self)
				fn(ctx)
			},
			OnStoppedLeading: func() { log.Info("no longer leading", "identity", self) },
		},
	})
	return nil
}
