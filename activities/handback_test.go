package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// handBackHRA is a fake cluster with HRA ci/app holding entries of ARC's
// webhook server (no name), a user's, and one arcflow handed back before.
func handBackHRA(t *testing.T, t0 time.Time) (*dynamicfake.FakeDynamicClient, *Kubernetes) {
	h := &v1alpha1.HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "app"}}
	entry := func(name string, from, until time.Duration, replicas int) v1alpha1.CapacityReservation {
		return v1alpha1.CapacityReservation{Name: name, EffectiveTime: metav1.NewTime(t0.Add(from)), ExpirationTime: metav1.NewTime(t0.Add(until)), Replicas: replicas}
	}
	h.Spec.CapacityReservations = []v1alpha1.CapacityReservation{
		entry("", 0, 10*time.Minute, 1), // ARC's webhook server's
		entry("nightly", 0, 8*time.Hour, 3),
		entry(calls.HandBackName(1), time.Minute, 11*time.Minute, 1),
		entry("", time.Second, 10*time.Minute+time.Second, 1),
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(h)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("HorizontalRunnerAutoscaler")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
	}, u)
	return dyn, &Kubernetes{Dynamic: dyn}
}

// entriesOf reads the HRA's capacityReservations as names with their
// expiry, in order.
func entriesOf(t *testing.T, k *Kubernetes) []v1alpha1.CapacityReservation {
	u, err := k.Dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Get(context.Background(), "app", metav1.GetOptions{})
	require.NoError(t, err)
	var h v1alpha1.HorizontalRunnerAutoscaler
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &h))
	return h.Spec.CapacityReservations
}

func updates(dyn *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range dyn.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

// Handing back writes arcflow's entries by name beside ARC's and the
// user's, once: the same entries again change nothing and write nothing; a
// new expiry replaces an entry; removal takes only arcflow's.
func TestHandBackWritesARCsFormOnceByName(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	dyn, k := handBackHRA(t, t0)
	job := func(id int64, effective, expires time.Duration) v1alpha1.CapacityReservation {
		return v1alpha1.CapacityReservation{Name: calls.HandBackName(id), EffectiveTime: metav1.NewTime(t0.Add(effective)), ExpirationTime: metav1.NewTime(t0.Add(expires)), Replicas: 1}
	}
	in := calls.HandBackInput{Namespace: "ci", Name: "app", Add: []v1alpha1.CapacityReservation{
		job(1, 5*time.Minute, 11*time.Minute), job(2, 5*time.Minute, 14*time.Minute), job(3, 5*time.Minute, 15*time.Minute),
	}}
	out, err := k.HandBackReservations(ctx, in)
	require.NoError(t, err)
	require.Equal(t, calls.HandBackOutput{Added: 2}, out, "job 1 was there with the same expiry")
	got := entriesOf(t, k)
	require.Len(t, got, 6)
	require.Equal(t, []string{"", "nightly", "arcflow-job-1", "", "arcflow-job-2", "arcflow-job-3"}, entryNames(got))
	require.Equal(t, t0.Add(time.Minute), got[2].EffectiveTime.Time.UTC(), "job 1's entry left as it was")
	require.Equal(t, job(2, 5*time.Minute, 14*time.Minute), normalized(got[4]))
	require.Equal(t, 1, updates(dyn))

	out, err = k.HandBackReservations(ctx, in)
	require.NoError(t, err)
	require.Equal(t, calls.HandBackOutput{}, out, "a second drain doubles nothing")
	require.Len(t, entriesOf(t, k), 6)
	require.Equal(t, 1, updates(dyn), "and writes nothing")

	out, err = k.HandBackReservations(ctx, calls.HandBackInput{Namespace: "ci", Name: "app",
		Add: []v1alpha1.CapacityReservation{job(3, 20*time.Minute, 30*time.Minute)}, Remove: []string{calls.HandBackName(2)}})
	require.NoError(t, err)
	require.Equal(t, calls.HandBackOutput{Added: 1, Removed: 1}, out)
	got = entriesOf(t, k)
	require.Equal(t, []string{"", "nightly", "arcflow-job-1", "", "arcflow-job-3"}, entryNames(got))
	require.Equal(t, job(3, 20*time.Minute, 30*time.Minute), normalized(got[4]), "a new expiry replaces the entry")

	out, err = k.HandBackReservations(ctx, calls.HandBackInput{Namespace: "ci", Name: "app", RemoveAll: true})
	require.NoError(t, err)
	require.Equal(t, calls.HandBackOutput{Removed: 2}, out)
	require.Equal(t, []string{"", "nightly", ""}, entryNames(entriesOf(t, k)), "ARC's and the user's entries stay")
}

func entryNames(entries []v1alpha1.CapacityReservation) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func normalized(e v1alpha1.CapacityReservation) v1alpha1.CapacityReservation {
	e.EffectiveTime, e.ExpirationTime = metav1.NewTime(e.EffectiveTime.UTC()), metav1.NewTime(e.ExpirationTime.UTC())
	return e
}

// A missing HRA has nothing to hand back to; an entry not named after a job
// is refused; a refusal of the worker's RBAC is not retried.
func TestHandBackRefusals(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	dyn, k := handBackHRA(t, t0)
	out, err := k.HandBackReservations(ctx, calls.HandBackInput{Namespace: "ci", Name: "gone", RemoveAll: true})
	require.NoError(t, err)
	require.Equal(t, calls.HandBackOutput{}, out)

	_, err = k.HandBackReservations(ctx, calls.HandBackInput{Namespace: "ci", Name: "app",
		Add: []v1alpha1.CapacityReservation{{Name: "nightly", ExpirationTime: metav1.NewTime(t0), Replicas: 1}}})
	require.ErrorContains(t, err, `entry "nightly" is not named arcflow-job-<job id>`)

	dyn.PrependReactor("update", "horizontalrunnerautoscalers", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1alpha1.HorizontalRunnerAutoscalerResource.GroupResource(), "app", errors.New("no update"))
	})
	_, err = k.HandBackReservations(ctx, calls.HandBackInput{Namespace: "ci", Name: "app", RemoveAll: true})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.Equal(t, ErrTypeForbidden, app.Type())
	require.True(t, app.NonRetryable())
	require.Contains(t, err.Error(), "grant the worker update on horizontalrunnerautoscalers")
}
