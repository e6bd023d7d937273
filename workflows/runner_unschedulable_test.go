package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

func (rt *runnerTest) signalUnschedulable(rv string) {
	rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{
		UID: "uid-1", ResourceVersion: rv, Exists: true, Phase: corePhase("Pending"), Unschedulable: true,
	})
}

// A pod no node can take is deleted after the unschedulable timeout, and the
// runner ends as one that could not start; nothing registered, so nothing is
// removed from GitHub.
func TestAnUnschedulablePodIsGivenUpAfterTheTimeout(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(-1)
		rt.after(time.Second, func() { rt.signalUnschedulable("1") })

		done := rt.run(true, RunnerTimings{UnschedulableTimeout: 2 * time.Minute})
		require.Equal(t, EndPodUnschedulable, done.Reason)
		require.Zero(t, rt.count("RemoveRunner"))
		deleted := rt.calls[len(rt.calls)-1]
		require.Equal(t, "DeleteRunnerPod", deleted.name, "no lookup after: the pod never ran")
		// On a wake of the registration checks: within one poll interval (30 s).
		require.GreaterOrEqual(t, deleted.at, time.Second+2*time.Minute)
		require.LessOrEqual(t, deleted.at, time.Second+2*time.Minute+30*time.Second)
	})
}

// A pod that the scheduler places after all, before the timeout, keeps its
// runner.
func TestAPodScheduledBeforeTheTimeoutIsKept(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(100 * time.Second)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalUnschedulable("1") })
		rt.after(90*time.Second, func() { rt.signalPod("Running", true, "2") }) // a node came up
		rt.after(10*time.Minute, func() {
			state := rt.state()
			require.Equal(t, PhaseIdle, state.Phase)
			rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"})
		})
		done := rt.run(true, RunnerTimings{UnschedulableTimeout: 2 * time.Minute})
		require.Equal(t, EndStopped, done.Reason)
	})
}

// A JIT runner, registered by its creation, is removed from GitHub when its pod
// is given up.
func TestAJITRunnerWithAnUnschedulablePodIsRemoved(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockJITPod()
		rt.mockRemove()
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(string, []byte) {})
		rt.after(time.Second, func() { rt.signalUnschedulable("1") })
		in := rt.jitInput()
		in.Timings.UnschedulableTimeout = time.Minute
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		var done RunnerDone
		require.NoError(t, rt.env.GetWorkflowResult(&done))
		require.Equal(t, EndPodUnschedulable, done.Reason)
		require.True(t, done.NeverStarted)
		require.Equal(t, []string{"EnsureRunnerPod", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
		require.Equal(t, time.Second+time.Minute, rt.calls[1].at, "exactly at the deadline: a JIT runner waits on it alone")
	})
}
