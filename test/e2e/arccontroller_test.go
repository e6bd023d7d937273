package e2e

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// arcLeaseSeconds is the Lease duration of the test's stand-in for ARC.
const arcLeaseSeconds = 15

// heldARCLease is a stand-in for ARC's controller-manager: it creates ARC's
// leader-election Lease and renews it every 3 s, as a live leader does, until
// stop; stop returns the last renewal.
func heldARCLease(t *testing.T, ctx context.Context, namespace, name string) (stop func() time.Time) {
	kube, err := stack.Kube()
	require.NoError(t, err)
	_, _ = stack.Kubectl(ctx, "create", "namespace", namespace)
	t.Cleanup(func() { _, _ = stack.Kubectl(context.Background(), "delete", "namespace", namespace, "--wait=false") })
	now := metav1.NowMicro()
	leases := kube.CoordinationV1().Leases(namespace)
	_, err = leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("actions-runner-controller-5c9d7_0a1b2c"), LeaseDurationSeconds: ptr.To[int32](arcLeaseSeconds),
			AcquireTime: &now, RenewTime: &now,
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	var mu sync.Mutex
	last := now.Time
	renewCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(3 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-tick.C:
			}
			lease, err := leases.Get(renewCtx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			lease.Spec.RenewTime = ptr.To(metav1.NowMicro())
			if _, err := leases.Update(renewCtx, lease, metav1.UpdateOptions{}); err == nil {
				mu.Lock()
				last = lease.Spec.RenewTime.Time
				mu.Unlock()
			}
		}
	}()
	return func() time.Time {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// conditionField reads a field (status, reason, message) of a resource's
// condition of type conditionType; empty when the read fails or there is none.
func conditionField(ctx context.Context, ns, resource, name, conditionType, field string) string {
	out, _ := stack.JSONPath(ctx, ns, resource, name, `{.status.conditions[?(@.type=="`+conditionType+`")].`+field+`}`)
	return out
}

// acceptedField reads a field of a resource's Accepted condition.
func acceptedField(ctx context.Context, ns, resource, name, field string) string {
	return conditionField(ctx, ns, resource, name, "Accepted", field)
}

// While ARC's controller-manager renews its Lease, arcflow starts nothing for a
// RunnerDeployment and its HRA, and says on each, with one event, what to stop;
// once the Lease lapses, arcflow takes both over by itself.
func TestArcflowActsOnlyOnceARCsControllerStops(t *testing.T) {
	parallel(t)
	const ns, arcNS, leaseName = "arc-handover", "arc-handover-system", "actions-runner-controller"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stopRenewing := heldARCLease(t, ctx, arcNS, leaseName)
	renewing := time.Now()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 1,
		Env: []string{"ARCFLOW_ARC_CONTROLLER_LEASE=" + arcNS + "/" + leaseName},
	})
	hra := strings.Replace(world.WebhookHRA("app", v1alpha1.KindRunnerDeployment, 3, 30), "minReplicas: 0", "minReplicas: 1", 1)
	require.NoError(t, w.Apply(ctx, `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
spec:
  replicas: 1
  template:
    spec:
      repository: octo-org/app
      labels: [linux]
---
`+hra))
	tc := dialTemporal(t, ns)
	poolID, hraID := contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "app"), contract.AutoscalerWorkflowID(ns, "app")
	started := func(id string) bool {
		_, err := tc.DescribeWorkflowExecution(ctx, id, "")
		return err == nil
	}

	for _, resource := range []string{"rdeploy", "hra"} {
		require.Eventually(t, func() bool {
			return acceptedField(ctx, ns, resource, "app", "reason") == "ARCControllerActive"
		}, 30*time.Second, 200*time.Millisecond, "%s: Accepted=False while ARC runs", resource)
		require.Equal(t, "False", acceptedField(ctx, ns, resource, "app", "status"))
		msg := acceptedField(ctx, ns, resource, "app", "message")
		require.Contains(t, msg, "ARC's controller-manager holds Lease "+arcNS+"/"+leaseName)
		require.Contains(t, msg, "scale its Deployment to 0 to hand over to arcflow")
		t.Logf("%s condition: %s", resource, msg)
	}
	// ARC stays up about 20 s, renewing its Lease: arcflow acts on nothing.
	require.Never(t, func() bool {
		return len(w.Runners.PodTimes()) > 0 || started(poolID) || started(hraID)
	}, time.Until(renewing.Add(20*time.Second)), 500*time.Millisecond, "a runner pod or workflow while ARC holds its Lease")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=ARCControllerActive",
		"-o", `jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name}{"\n"}{end}`)
	require.NoError(t, err)
	got := strings.Fields(events)
	sort.Strings(got)
	require.Equal(t, []string{"HorizontalRunnerAutoscaler/app", "RunnerDeployment/app"}, got, "one event per resource, not one per check")

	// ARC stops (SIGKILL, or scaled to 0 without releasing): its Lease lapses.
	expiry := stopRenewing().Add(arcLeaseSeconds * time.Second)
	require.Eventually(t, func() bool { return len(w.Runners.PodTimes()) > 0 }, time.Until(expiry)+30*time.Second, 100*time.Millisecond,
		"arcflow creates the runner within 30 s of the Lease's expiry")
	firstPod := w.Runners.PodTimes()[0].Created
	desc, err := tc.DescribeWorkflowExecution(ctx, poolID, "")
	require.NoError(t, err)
	poolStart := desc.GetWorkflowExecutionInfo().GetStartTime().AsTime()
	require.False(t, poolStart.Before(expiry), "the pool started at %v, before the Lease expired at %v", poolStart, expiry)
	for _, resource := range []string{"rdeploy", "hra"} {
		require.Eventually(t, func() bool {
			return acceptedField(ctx, ns, resource, "app", "status") == "True"
		}, 10*time.Second, 200*time.Millisecond, "%s: Accepted=True after the handover", resource)
	}
	require.True(t, started(hraID), "the autoscaler runs")
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 30*time.Second, 100*time.Millisecond, "the runner registers")
	t.Logf("handover: Lease expired at %s; pool workflow started %v after, first runner pod %v after",
		expiry.Format(time.RFC3339Nano), poolStart.Sub(expiry).Round(10*time.Millisecond), firstPod.Sub(expiry).Round(10*time.Millisecond))
}
