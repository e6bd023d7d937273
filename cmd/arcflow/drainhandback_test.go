//go:build !webhookonly

package main

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// drainHRAs is a fake cluster with HRAs ci/app (an entry of ARC's webhook
// server in it) and ci/web.
func drainHRAs(t *testing.T, t0 time.Time) *dynamicfake.FakeDynamicClient {
	var objs []runtime.Object
	for _, name := range []string{"app", "web"} {
		h := &v1alpha1.HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: name}}
		if name == "app" {
			h.Spec.CapacityReservations = []v1alpha1.CapacityReservation{
				{EffectiveTime: metav1.NewTime(t0), ExpirationTime: metav1.NewTime(t0.Add(time.Hour)), Replicas: 1},
			}
		}
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(h)
		require.NoError(t, err)
		u := &unstructured.Unstructured{Object: fields}
		u.SetAPIVersion(v1alpha1.GroupVersion.String())
		u.SetKind("HorizontalRunnerAutoscaler")
		objs = append(objs, u)
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
	}, objs...)
}

func hraEntries(t *testing.T, d *drainer, name string) []v1alpha1.CapacityReservation {
	u, err := d.dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	var h v1alpha1.HorizontalRunnerAutoscaler
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &h))
	return h.Spec.CapacityReservations
}

// drain hands each autoscaler's queued jobs back to ARC in ARC's form, the
// running ones not; a second drain doubles nothing; an autoscaler whose
// state is unknown keeps drain from reporting done; --undo removes what was
// handed back and leaves ARC's entry.
func TestDrainHandsQueuedJobsBackToARC(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	dyn := drainHRAs(t, now)
	app := &workflows.AutoscalerState{Spec: contract.AutoscalerSpec{Namespace: "ci", Name: "app"}}
	app.Reservations.Active = []workflows.Reservation{
		{JobID: 11, EffectiveTime: now.Add(-2 * time.Minute), ExpirationTime: now.Add(8 * time.Minute)},
		{JobID: 12, EffectiveTime: now.Add(-time.Minute), ExpirationTime: now.Add(9 * time.Minute), Started: true},
		{JobID: 13, EffectiveTime: now.Add(-time.Minute), ExpirationTime: now.Add(9 * time.Minute)},
	}
	targets := &drainTargets{autoscalers: map[string]*workflows.AutoscalerState{"hra/ci/app": app, "hra/ci/web": nil}}
	var out bytes.Buffer
	d := &drainer{dynamic: dyn, out: &out, opts: &drainOptions{namespace: "ci"}}

	require.Equal(t, []string{"hra/ci/web"}, d.handBackTargets(ctx, targets), "web's state is not known yet")
	require.Contains(t, out.String(), "drain: hra/ci/app: handed 2 queued jobs back to ARC as capacityReservations of HRA ci/app (2 new, named arcflow-job-<job id>)")
	got := hraEntries(t, d, "app")
	require.Len(t, got, 3)
	require.Empty(t, got[0].Name, "ARC's entry stays first")
	for i, job := range []workflows.Reservation{app.Reservations.Active[0], app.Reservations.Active[2]} {
		e := got[i+1]
		require.Equal(t, []any{"arcflow-job-" + strconv.FormatInt(job.JobID, 10), 1}, []any{e.Name, e.Replicas})
		require.True(t, e.ExpirationTime.Equal(&metav1.Time{Time: job.ExpirationTime.Truncate(time.Second)}), "expires with arcflow's reservation: %v", e.ExpirationTime)
		require.WithinDuration(t, now, e.EffectiveTime.Time, time.Second, "effective when handed back")
	}

	out.Reset()
	require.Empty(t, d.handBackTargets(ctx, &drainTargets{autoscalers: map[string]*workflows.AutoscalerState{
		"hra/ci/app": app, "hra/ci/web": {Spec: contract.AutoscalerSpec{Namespace: "ci", Name: "web"}},
	}}))
	require.Empty(t, out.String(), "app was handed back already; web holds no queued job")

	again := &drainer{dynamic: dyn, out: &out, opts: &drainOptions{namespace: "ci"}}
	require.Empty(t, again.handBackTargets(ctx, targets.withState("hra/ci/web", &workflows.AutoscalerState{Spec: contract.AutoscalerSpec{Namespace: "ci", Name: "web"}})))
	require.Len(t, hraEntries(t, d, "app"), 3, "a second drain doubles nothing")

	out.Reset()
	require.NoError(t, d.undoHandBack(ctx))
	require.Equal(t, "drain --undo: hra ci/app: removed 2 capacity reservations handed back to ARC\n", out.String())
	got = hraEntries(t, d, "app")
	require.Len(t, got, 1)
	require.Empty(t, got[0].Name)
}

func (t *drainTargets) withState(id string, s *workflows.AutoscalerState) *drainTargets {
	t.autoscalers[id] = s
	return t
}
