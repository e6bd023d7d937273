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

// A pool that starts with no history (Temporal's store lost) takes over the
// runners it finds in the cluster before its first decision: they count as its
// capacity, registered ones with their GitHub IDs, each keeps its pod's
// template; ended ones are cleaned up by their workflows, and a scale-down
// stops an idle one, never the busy one.
func TestAPoolWithNoHistoryTakesOverItsRunnersFromTheCluster(t *testing.T) {
	pt := newPoolTest(t)
	running := activities.PodState{UID: "u", Exists: true, Phase: "Running", Ready: true}
	pt.own = []activities.ARCRunner{
		{Name: "app-busy", Own: true, TemplateHash: "h1", Pod: running},
		{Name: "app-jit", Own: true, TemplateHash: "h1", JIT: true, RunnerID: 7, Pod: running},
		{Name: "app-old", Own: true, TemplateHash: "h0", Pod: running},
		{Name: "app-ended", Own: true, TemplateHash: "h1", Pod: activities.PodState{UID: "e", Exists: true, Phase: "Succeeded"}},
		{Name: "app-secret-only", Own: true},
	}
	pt.ids = map[string]int64{"app-busy": 11, "app-old": 12}
	pt.busy["app-busy"] = true
	pt.at(time.Second, func() {
		require.Len(t, pt.adopted, 5)
		byName := map[string]adoptedStart{}
		for _, a := range pt.adopted {
			byName[a.in.Pod.Name] = a
			require.Equal(t, "cluster", a.start.Memo["adoptedFrom"])
			require.True(t, a.start.ReuseClosed, "a workflow of its name that closed while its pod lingered does not keep it from being taken over")
			require.Equal(t, string(PhaseAdopted), a.start.Keywords[contract.SearchAttrRunnerState.GetName()])
			require.True(t, a.in.Adopted.Own)
			require.True(t, a.in.Ephemeral, "the pool's runners are ephemeral")
		}
		require.Equal(t, int64(11), byName["app-busy"].in.Adopted.RunnerID, "learnt from the scope's runner list")
		require.Equal(t, int64(7), byName["app-jit"].in.Adopted.RunnerID, "from its Secret")
		require.True(t, byName["app-jit"].in.Pod.JIT)
		require.False(t, byName["app-busy"].in.Pod.JIT)
		require.Equal(t, "h0", byName["app-old"].in.Pod.TemplateHash, "it keeps its pod's template")
		require.Equal(t, "h1", byName["app-secret-only"].in.Pod.TemplateHash)
		require.Empty(t, pt.created, "3 live runners for 3 wanted; the ended ones are only cleaned up")
		require.Empty(t, pt.stopped)
		require.Contains(t, pt.events, "RunnersTakenOver: took over 5 runner(s) that outlived their workflows: app-busy, app-jit, app-old, app-ended, app-secret-only")
		pt.done("app-ended", EndCompleted)
		pt.done("app-secret-only", EndPodDeleted)
	})
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 1, "once the ended ones are gone, the runner on the old template is replaced as in a rollout")
		require.Equal(t, "h1", pt.created[0].hash)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(3*time.Second, func() {
		require.NotContains(t, pt.stopped, "app-busy", "the busy one finishes its job")
		require.Subset(t, pt.stopped, []string{"app-jit", "app-old"}, "the idle ones go")
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(3, "h1", true))
}

// Without runners in the cluster a new pool takes nothing over and asks
// GitHub nothing.
func TestANewPoolFindsNothingToTakeOver(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		require.Empty(t, pt.adopted)
		require.Len(t, pt.created, 2)
		for _, e := range pt.events {
			require.NotContains(t, e, "RunnersTakenOver")
		}
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(2, "h1", true))
	pt.env.AssertNotCalled(t, "RunnerIDs", mock.Anything, mock.Anything)
}

// An autoscaler with no history asks about every open run at its first
// decision, however young, and reserves the jobs in progress as well as the
// queued ones: the runners running them (taken over from the cluster) are
// capacity it wants, and the jobs that queued while no autoscaler existed get
// runners at once. Its later reconciles ask as before.
func TestAnAutoscalerWithNoHistoryReservesTheJobsInProgress(t *testing.T) {
	at := newAutoscalerTest(t)
	spec := hraSpec(0, 20)
	spec.Repositories = []string{"octo/app"}
	spec.ReconcilePeriod = 5 * time.Minute
	spec.TriggerDuration = time.Hour
	var asked []activities.QueuedJobsInput
	at.env.OnActivity(gh.ListQueuedJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.QueuedJobsInput) (activities.QueuedJobsOutput, error) {
			asked = append(asked, in)
			if len(asked) == 1 {
				return activities.QueuedJobsOutput{Queued: []int64{7}, QueuedRuns: []int64{70},
					InProgress: []int64{1, 2, 3}, InProgressRuns: []int64{10, 10, 30}, OpenRuns: []int64{10, 30, 70}}, nil
			}
			return activities.QueuedJobsOutput{OpenRuns: []int64{10, 30, 70}}, nil
		})
	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.scales[0].at, "at its first decision")
		require.Equal(t, 4, at.scales[0].replicas, "3 jobs in progress and 1 queued")
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "c2", JobID: 2, Action: "completed"})
	}, time.Second)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 3, at.last(), "a completion releases a running job's reservation") }, time.Minute)
	spec.ScaleDownDelay = 0
	at.finish(6*time.Minute, spec)
	require.Len(t, asked, 2)
	require.True(t, asked[0].Running, "the first reconcile asks about running jobs too")
	require.Zero(t, asked[0].Quiet, "and about young runs: no webhook told it of any")
	require.False(t, asked[1].Running, "later ones ask as before")
	require.NotZero(t, asked[1].Quiet)
}

// A runner taken over from the cluster reads its pod as it is when its
// workflow starts: one that ended after the pool listed it leaves at once
// (an ephemeral one without a call: GitHub removed it), instead of waiting
// for a registration that never comes.
func TestARunnerTakenOverReadsItsPodAtStart(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.env.OnActivity(kube.GetRunnerPod, mock.Anything, mock.Anything).Return(
			func(_ context.Context, ref activities.PodRef) (activities.PodState, error) {
				rt.record("GetRunnerPod")
				require.Equal(t, "uid-1", ref.UID)
				return activities.PodState{UID: "uid-1", Exists: true, Phase: "Succeeded"}, nil
			})
		in := rt.input(true, RunnerTimings{})
		in.Adopted = &activities.ARCRunner{Name: in.Pod.Name, Own: true, Ephemeral: true,
			Pod: activities.PodState{UID: "uid-1", Exists: true, Phase: "Running", Ready: true}}
		rt.after(time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		var done RunnerDone
		require.NoError(t, rt.env.GetWorkflowResult(&done))
		require.Equal(t, EndCompleted, done.Reason)
		require.Equal(t, []string{"GetRunnerPod", "DeleteRunnerPod"}, rt.names(), "no registration wait, no call to GitHub")
	})
}

// After a takeover from ARC, ARC's capacity reservations stand for the jobs
// ARC saw: a fresh autoscaler does not reserve the running jobs again.
func TestAnAutoscalerWithARCsReservationsDoesNotReserveRunningJobsAgain(t *testing.T) {
	at := newAutoscalerTest(t)
	start := at.env.Now()
	spec := hraSpec(0, 20)
	spec.Repositories = []string{"octo/app"}
	spec.ReconcilePeriod = 5 * time.Minute
	spec.Capacity = []v1alpha1.CapacityReservation{
		{EffectiveTime: metav1.NewTime(start.Add(-time.Minute)), ExpirationTime: metav1.NewTime(start.Add(29 * time.Minute)), Replicas: 3},
	}
	var asked []activities.QueuedJobsInput
	at.env.OnActivity(gh.ListQueuedJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.QueuedJobsInput) (activities.QueuedJobsOutput, error) {
			asked = append(asked, in)
			return activities.QueuedJobsOutput{OpenRuns: []int64{10, 20, 30}}, nil
		})
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 3, at.scales[0].replicas, "ARC's three reservations") }, time.Second)
	at.finish(time.Minute, spec)
	require.NotEmpty(t, asked)
	require.False(t, asked[0].Running)
}
