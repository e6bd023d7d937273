package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// mockJITPod makes EnsureRunnerPod register a JIT runner with ID 42.
func (rt *runnerTest) mockJITPod() {
	rt.mockPodCreated(activities.RunnerPodOutput{UID: "uid-1", Created: true, RunnerID: 42})
}

func (rt *runnerTest) jitInput() RunnerInput {
	in := rt.input(true, RunnerTimings{})
	in.Pod.JIT = true
	in.PoolWorkflowID = "pool/ci/runnerdeployment/app"
	return in
}

func (rt *runnerTest) runJIT() RunnerDone {
	rt.env.ExecuteWorkflow(RunnerWorkflow, rt.jitInput())
	require.True(rt.t, rt.env.IsWorkflowCompleted())
	require.NoError(rt.t, rt.env.GetWorkflowError())
	var done RunnerDone
	require.NoError(rt.t, rt.env.GetWorkflowResult(&done))
	return done
}

// A JIT runner is registered by its creation: it is Idle as soon as its pod is
// Ready, without a single lookup, and GitHub removes it after its job.
func TestAJITRunnerNeedsNoRegistrationLookup(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockJITPod()
		var signals []string
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(name string, _ []byte) {
			signals = append(signals, name)
			rt.record("signal " + name)
		})
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(2*time.Second, func() {
			state := rt.state()
			require.Equal(t, PhaseIdle, state.Phase, "Idle once Ready")
			require.Equal(t, int64(42), state.RunnerID)
		})
		rt.after(10*time.Second, func() { rt.signalPod("Succeeded", false, "2") })

		done := rt.runJIT()
		require.Equal(t, EndCompleted, done.Reason)
		require.False(t, done.NeverStarted)
		require.Equal(t, []string{"EnsureRunnerPod", "signal " + contract.SignalRunnerRegistered, "DeleteRunnerPod", "signal " + contract.SignalRunnerDone}, rt.names())
		require.Equal(t, time.Second, rt.calls[1].at, "registered the moment the pod is Ready")
	})
}

// A stopped JIT runner is removed by the ID its creation returned.
func TestAStoppedJITRunnerIsRemovedByItsID(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockJITPod()
		rt.mockRemove()
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(string, []byte) {})
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		done := rt.runJIT()
		require.Equal(t, EndStopped, done.Reason)
		require.Equal(t, []string{"EnsureRunnerPod", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
	})
}

// A JIT runner whose pod fails before it is Ready never started: the pool hears
// so (and backs off), and the registration its creation made is removed.
func TestAJITRunnerWhosePodFailsFirstNeverStarted(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockJITPod()
		rt.mockRemove()
		var done RunnerDone
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(name string, arg []byte) {
			if name == contract.SignalRunnerDone {
				require.NoError(t, json.Unmarshal(arg, &done))
			}
		})
		rt.after(time.Second, func() { rt.signalPod("Failed", false, "1") })

		result := rt.runJIT()
		require.Equal(t, EndPodFailed, result.Reason)
		require.True(t, done.NeverStarted, "the pool counts it as a runner that could not start")
		require.False(t, done.started())
		require.Equal(t, []string{"EnsureRunnerPod", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
	})
}
