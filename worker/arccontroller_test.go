package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

const testLeaseRef = "actions-runner-system/actions-runner-controller"

func arcLease(holder string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "actions-runner-system", Name: "actions-runner-controller"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(seconds),
			AcquireTime: &metav1.MicroTime{Time: renewed.Add(-time.Hour)}, RenewTime: &metav1.MicroTime{Time: renewed},
		},
	}
}

func arcPod(name string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "actions-runner-system", Name: name,
			Labels: map[string]string{"app.kubernetes.io/name": "actions-runner-controller"}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func TestARCIsAliveWhileItsLeaseIsRenewedOrItsPodsRun(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	const holder = "actions-runner-controller-7d9f_1b2c"
	running, pending, done := arcPod("arc-1", corev1.PodRunning), arcPod("arc-2", corev1.PodPending), arcPod("arc-3", corev1.PodSucceeded)
	for _, tc := range []struct {
		name       string
		lease      *coordinationv1.Lease
		pods       []corev1.Pod
		seen       time.Time // when this process saw a renewal
		wantActive bool
		wantCause  string
		message    string
	}{
		{name: "held, renewed 3 s ago", lease: arcLease(holder, now.Add(-3*time.Second), 15),
			wantActive: true, wantCause: arcCauseLease,
			message: "ARC's controller-manager holds Lease " + testLeaseRef + " (holder " + holder + ", renewed 3s ago); scale its Deployment to 0 to hand over to arcflow"},
		{name: "held, its pods not even listed", lease: arcLease(holder, now.Add(-time.Second), 15), pods: []corev1.Pod{running},
			wantActive: true, wantCause: arcCauseLease},
		{name: "expired a second ago, within the allowed clock skew", lease: arcLease(holder, now.Add(-16*time.Second), 15),
			wantActive: true, wantCause: arcCauseLease},
		{name: "expired beyond the skew", lease: arcLease(holder, now.Add(-18*time.Second), 15)},
		{name: "expired by its clock, but seen renewed 2 s ago (ARC's clock is behind)", lease: arcLease(holder, now.Add(-time.Minute), 15),
			seen: now.Add(-2 * time.Second), wantActive: true, wantCause: arcCauseLease},
		{name: "seen renewed longer than a duration ago", lease: arcLease(holder, now.Add(-time.Minute), 15), seen: now.Add(-16 * time.Second)},
		{name: "released: no holder", lease: arcLease("", now.Add(-time.Second), 1)},
		{name: "missing", lease: nil},
		{name: "missing, a controller pod Running (leader election off)", pods: []corev1.Pod{done, running, pending},
			wantActive: true, wantCause: arcCausePods,
			message: "ARC's controller-manager runs in pod actions-runner-system/arc-1 (" + DefaultARCControllerPodSelector + "), with no Lease held; scale its Deployment to 0 to hand over to arcflow"},
		{name: "expired, a controller pod Running", lease: arcLease(holder, now.Add(-time.Minute), 15), pods: []corev1.Pod{running},
			wantActive: true, wantCause: arcCausePods},
		{name: "released, no pod Running", lease: arcLease("", now, 1), pods: []corev1.Pod{pending, done}},
		{name: "missing, no pod", pods: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := arcAlive(testLeaseRef, tc.lease, DefaultARCControllerPodSelector, tc.pods, now, tc.seen)
			require.Equal(t, tc.wantActive, got.Active)
			require.Equal(t, tc.wantCause, got.Cause)
			if tc.message != "" {
				require.Equal(t, tc.message, got.Message)
			}
			if got.Active {
				require.Equal(t, "ARCControllerActive", got.Reason())
			}
		})
	}
	require.False(t, arcAlive(testLeaseRef, nil, "", []corev1.Pod{running}, now, time.Time{}).Active, "no selector: pods are not looked at")
}

// A renewal the check sees happen counts from when it was seen, whatever the
// renewTime says; a Lease that stops changing lapses a duration later.
func TestARCCheckTrustsARenewalItSawHappen(t *testing.T) {
	ctx := context.Background()
	stale := time.Now().Add(-time.Hour) // ARC's clock an hour behind
	lease := arcLease("arc", stale, 15)
	kube := fake.NewClientset(lease)
	c, err := NewARCController(kube, testLeaseRef, DefaultARCControllerPodSelector)
	require.NoError(t, err)

	s, err := c.Check(ctx)
	require.NoError(t, err)
	require.False(t, s.Active, "first sight of a stale Lease: nothing seen renewed yet")

	lease.Spec.RenewTime = &metav1.MicroTime{Time: stale.Add(2 * time.Second)}
	_, err = kube.CoordinationV1().Leases(lease.Namespace).Update(ctx, lease, metav1.UpdateOptions{})
	require.NoError(t, err)
	s, err = c.Check(ctx)
	require.NoError(t, err)
	require.True(t, s.Active, "renewed since the last check")
	require.Contains(t, s.Message, "renewed 0s ago")

	require.NoError(t, kube.CoordinationV1().Leases(lease.Namespace).Delete(ctx, lease.Name, metav1.DeleteOptions{}))
	pod := arcPod("arc-1", corev1.PodRunning)
	_, err = kube.CoreV1().Pods(pod.Namespace).Create(ctx, &pod, metav1.CreateOptions{})
	require.NoError(t, err)
	s, err = c.Check(ctx)
	require.NoError(t, err)
	require.Equal(t, arcCausePods, s.Cause, "no Lease: ARC's pods decide")
}

func TestNewARCControllerParsesTheLeaseAndSelector(t *testing.T) {
	c, err := NewARCController(nil, "", DefaultARCControllerPodSelector)
	require.NoError(t, err)
	require.Nil(t, c, "empty disables the check")
	c, err = NewARCController(nil, "arc/lease", "")
	require.NoError(t, err)
	require.Equal(t, "arc", c.Namespace)
	require.Equal(t, "lease", c.Lease)
	for _, bad := range []string{"lease", "/lease", "arc/", "a/b/c"} {
		_, err = NewARCController(nil, bad, "")
		require.ErrorContains(t, err, "want namespace/name", bad)
	}
	_, err = NewARCController(nil, "arc/lease", "app in (")
	require.ErrorContains(t, err, "--arc-controller-pod-selector")
}

// The gate changes state only when ARC's liveness or its cause changes; a new
// message for the same state (a later renewal) keeps the conditions as written.
func TestARCGateChangesStateOnlyWhenARCStartsOrStops(t *testing.T) {
	w := &ResourceWatcher{Log: slog.New(slog.DiscardHandler), ARC: &ARCController{}}
	lease := func(msg string) ARCStatus { return ARCStatus{Active: true, Cause: arcCauseLease, Message: msg} }
	require.True(t, w.setARCStatus(lease("renewed 1s ago")), "the first answer")
	require.False(t, w.setARCStatus(lease("renewed 4s ago")))
	require.Equal(t, "renewed 1s ago", w.arcGate.status.Message, "the message of the state's first answer stays")
	require.True(t, w.setARCStatus(ARCStatus{Active: true, Cause: arcCausePods, Message: "pod"}))
	require.True(t, w.setARCStatus(ARCStatus{}), "ARC stopped")
	require.False(t, w.setARCStatus(ARCStatus{}))
	require.True(t, w.setARCStatus(lease("back")), "ARC came back")
}
