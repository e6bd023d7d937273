package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/workflows"
)

// A pool's start creates runners' pods only once every live replica runs
// runners so created: a live Lease of an older release (no revision on it)
// holds it back, an expired one does not.
func TestRunnersAreCreatedAtStartOnlyOnceEveryReplicaCan(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset()
	leases := kube.CoordinationV1().Leases("arcflow-system")
	self := &Liveness{Kube: kube, Namespace: "arcflow-system", Identity: "new-1", Log: slog.Default()}
	require.NoError(t, self.renew(ctx, leases, livenessLeaseName(self.Identity), 6*time.Second))

	olderRelease := func(name string, renewed time.Time) {
		_, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelWorkerLiveness: "true"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(6)),
				RenewTime: ptr.To(metav1.NewMicroTime(renewed))},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	olderRelease("gone", time.Now().Add(-time.Minute))
	check := func() bool {
		r := &WorkerRevisions{Kube: kube, Namespace: "arcflow-system", Log: slog.Default()}
		return r.AllRun(ctx, workflows.RunnerRevisionCreatedByStart)
	}
	require.True(t, check(), "this release's replica, and an older one long gone")

	olderRelease("old-live", time.Now())
	require.False(t, check(), "an older release's replica still runs")

	require.NoError(t, leases.Delete(ctx, "old-live", metav1.DeleteOptions{}))
	require.True(t, check())
}
