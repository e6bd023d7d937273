package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A pool's first run takes over the runners ARC left: they count as its
// capacity from its first decision, a scale-down removes idle ones (never a
// busy one), and only a static runner on ARC's pod spec is replaced.
func TestAPoolAdoptsTheRunnersARCLeft(t *testing.T) {
	pt := newPoolTest(t)
	pt.env.OnActivity(kube.ARCRunners, mock.Anything, mock.Anything).Return([]activities.ARCRunner{
		{Name: "app-arc-busy", Ephemeral: true, RunnerID: 1, Pod: activities.PodState{UID: "u1", Exists: true, Phase: "Running", Ready: true}},
		{Name: "app-arc-idle", Ephemeral: true, RunnerID: 2, Pod: activities.PodState{UID: "u2", Exists: true, Phase: "Running", Ready: true}},
		{Name: "app-arc-static", Ephemeral: false, RunnerID: 3, Pod: activities.PodState{UID: "u3", Exists: true, Phase: "Running", Ready: true}},
	}, nil)
	pt.busy["app-arc-busy"] = true
	pt.at(time.Second, func() {
		require.Len(t, pt.adopted, 3)
		for _, a := range pt.adopted {
			require.Equal(t, string(PhaseAdopted), a.start.Keywords[contract.SearchAttrRunnerState.GetName()], "the UI shows it adopted")
			require.Equal(t, "ARC", a.start.Memo["adoptedFrom"])
			require.Equal(t, a.in.Pod.Name != "app-arc-static", a.in.Ephemeral)
		}
		require.Len(t, pt.created, 1, "the static runner, on ARC's pod spec, is replaced as in a rollout; the ephemeral ones count as they are")
		require.Equal(t, 4, pt.status.Replicas)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(2*time.Second, func() {
		require.Subset(t, pt.stopped, []string{"app-arc-idle", "app-arc-static"}, "the idle ones go")
		require.NotContains(t, pt.stopped, "app-arc-busy", "the busy one finishes its job")
		require.Len(t, pt.created, 1)
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(3, "h1", true))
}

// An adopted idle runner stopped by its pool is removed from GitHub before
// its pod, and its end removes ARC's objects (PodRef.ARC); an adopted busy
// one that ends after its job leaves without a call.
func TestAnAdoptedRunnerLeavesAsARCWouldHaveLetItLeave(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockRemove()
		var refs []activities.PodRef
		rt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(func(_ context.Context, ref activities.PodRef) error {
			rt.record("DeleteRunnerPod")
			refs = append(refs, ref)
			return nil
		})
		in := rt.input(true, RunnerTimings{})
		in.Adopted = &activities.ARCRunner{Name: in.Pod.Name, Ephemeral: true, RunnerID: 42,
			Pod: activities.PodState{UID: "uid-1", Exists: true, Phase: "Running", Ready: true}}
		rt.after(time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		require.Equal(t, []string{"RemoveRunner", "DeleteRunnerPod"}, rt.names(), "no pod created; removed, then deleted")
		require.True(t, refs[0].ARC, "ARC's finalizers and objects go with it")

		rt = newRunnerTest(t, revision)
		rt.mockPod()
		in.Adopted.Pod.Phase = "Succeeded"
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		var done RunnerDone
		require.NoError(t, rt.env.GetWorkflowResult(&done))
		require.Equal(t, EndCompleted, done.Reason)
		require.Equal(t, []string{"DeleteRunnerPod"}, rt.names(), "GitHub removed it with its job")
	})
}

// A completion of a job queued before the autoscaler first ran releases one
// of the capacity reservations ARC wrote (the oldest), as ARC would; an
// unknown completion of a later job waits for its queued delivery as before.
func TestCompletionsOfARCsJobsReleaseItsReservations(t *testing.T) {
	at := newAutoscalerTest(t)
	start := at.env.Now()
	spec := hraSpec(0, 10)
	spec.Capacity = []v1alpha1.CapacityReservation{
		{EffectiveTime: metav1.NewTime(start.Add(-2 * time.Minute)), ExpirationTime: metav1.NewTime(start.Add(8 * time.Minute)), Replicas: 1},
		{EffectiveTime: metav1.NewTime(start.Add(-time.Minute)), ExpirationTime: metav1.NewTime(start.Add(9 * time.Minute)), Replicas: 1},
	}
	signal := func(after time.Duration, ev contract.JobEvent) {
		at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalJob, ev) }, after)
	}
	signal(time.Minute, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-arc-1", QueuedAt: start.Add(-2 * time.Minute)})
	signal(2*time.Minute, contract.JobEvent{DeliveryID: "c9", JobID: 9, Action: "completed", QueuedAt: start.Add(time.Minute)})
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 2, at.scales[0].replicas, "ARC's two reservations at first")
		require.Equal(t, 1, at.last(), "one released by the completion of ARC's job")
	}, 90*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.last(), "a later job's early completion releases nothing")
	}, 3*time.Minute)
	spec.ScaleDownDelay = 0
	at.finish(4*time.Minute, spec)
}
