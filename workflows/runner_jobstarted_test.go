package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A runner told its job starts (StartsTold) learns from its job's start that
// it registered: no registration check, no signal to its pool, and one timer
// (its first check, which the start made moot). It shows Busy, and ends
// without showing Done (RunnerRevisionQuietEnd).
func TestAJobStartTellsARunnerItRegistered(t *testing.T) {
	rt := newRunnerTest(t, RunnerRevisionQuietEnd)
	rt.mockPod()
	rt.mockFind(0)
	var poolSignals []string
	rt.onPoolSignal("pool/ci/runnerdeployment/app", func(name string, _ []byte) { poolSignals = append(poolSignals, name) })
	timers := 0
	rt.env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	published := rt.recordPublished()
	rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
	rt.after(12*time.Second, func() {
		rt.env.SignalWorkflow(contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
	})
	rt.after(13*time.Second, func() {
		state := rt.state()
		require.Equal(t, PhaseBusy, state.Phase, "its job runs")
		require.Equal(t, int64(42), state.RunnerID)
	})
	rt.after(40*time.Second, func() { rt.signalPod("Succeeded", false, "2") })

	in := rt.input(true, RunnerTimings{})
	in.StartsTold, in.PoolWorkflowID = true, "pool/ci/runnerdeployment/app"
	rt.env.ExecuteWorkflow(RunnerWorkflow, in)
	require.NoError(t, rt.env.GetWorkflowError())
	var done RunnerDone
	require.NoError(t, rt.env.GetWorkflowResult(&done))

	require.Equal(t, EndCompleted, done.Reason)
	require.Equal(t, int64(42), done.RunnerID, "its pool counts it as a runner that started")
	require.Zero(t, rt.count("FindRunner"), "GitHub's start told it")
	require.Equal(t, []string{contract.SignalRunnerDone}, poolSignals, "its pool heard the start from the autoscaler")
	require.Equal(t, 1, timers, "the first check's timer only")
	require.Equal(t, []string{string(PhaseBusy)}, *published, "its workflow's Completed status says it ended")
}

// Not told its job starts, it checks early, as
// before, and a start that comes first still counts.
func TestARunnerWhosePoolHearsNoStartsChecksEarly(t *testing.T) {
	rt := newRunnerTest(t, RunnerRevisionQuietEnd)
	rt.mockPod()
	rt.mockFind(5 * time.Second)
	var poolSignals []string
	rt.onPoolSignal("pool/ci/runnerdeployment/app", func(name string, _ []byte) { poolSignals = append(poolSignals, name) })
	rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
	rt.after(40*time.Second, func() { rt.signalPod("Succeeded", false, "2") })

	in := rt.input(true, RunnerTimings{})
	in.PoolWorkflowID = "pool/ci/runnerdeployment/app"
	rt.env.ExecuteWorkflow(RunnerWorkflow, in)
	require.NoError(t, rt.env.GetWorkflowError())
	require.Equal(t, 2*time.Second, rt.calls[1].at, "its first check after RegistrationPollMin")
	require.Equal(t, []string{contract.SignalRunnerRegistered, contract.SignalRunnerDone}, poolSignals)
}

// A pool's new runners hear their job starts when its autoscaler says it
// passes them on; a warm buffer's do not, as their times to ready count.
func TestAPoolTellsItsRunnersWhetherTheyHearTheirStarts(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1}) })
	pt.at(2*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, NamesFinished: true, StartsTold: true})
	})
	pt.at(3*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3, NamesFinished: true, StartsTold: true,
			Warm: &WarmRequest{From: "hra/ci/app"}})
	})
	pt.at(4*time.Second, func() {
		require.Len(t, pt.created, 3)
		require.False(t, pt.created[0].startsTold, "a request that does not say so")
		require.True(t, pt.created[1].startsTold)
		require.False(t, pt.created[2].startsTold, "a warm buffer's runner")
	})
	pt.deleteAndDrain(5 * time.Second)
	pt.run(spec(0, "h1", true))
}

// A stop does not wait for the first check a job's start would have made
// moot: the runner checks at once whether it registered, and leaves.
func TestAStoppedRunnerToldItsStartsChecksAtOnce(t *testing.T) {
	rt := newRunnerTest(t, RunnerRevisionQuietEnd)
	rt.mockPod()
	rt.mockFind(0)
	rt.mockRemove()
	rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
	rt.after(5*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })
	in := rt.input(true, RunnerTimings{})
	in.StartsTold = true
	rt.env.ExecuteWorkflow(RunnerWorkflow, in)
	require.NoError(t, rt.env.GetWorkflowError())
	require.Equal(t, []string{"EnsureRunnerPod", "FindRunner", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
	require.Less(t, rt.calls[1].at, 10*time.Second, "checked after the stop, not 30 s after the start")
}

// A runner that registered before a job came to it (it shows Idle) shows Busy
// once its job's start is told to it (RunnerRevisionBusyAfterIdle); a runner
// of the revision before stayed Idle while its job ran.
func TestARunnerIdleBeforeItsJobShowsBusy(t *testing.T) {
	for _, tc := range []struct {
		revision  int
		published []string
	}{
		{RunnerRevisionRecheckAfterPodGone, []string{string(PhaseIdle)}},
		{RunnerRevisionBusyAfterIdle, []string{string(PhaseIdle), string(PhaseBusy)}},
	} {
		rt := newRunnerTest(t, tc.revision)
		rt.mockPod()
		rt.mockFind(5 * time.Second)
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(string, []byte) {})
		published := rt.recordPublished()
		var during RunnerPhase
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(30*time.Second, func() {
			rt.env.SignalWorkflow(contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
		})
		rt.after(31*time.Second, func() {
			during = rt.state().Phase
		})
		rt.after(40*time.Second, func() { rt.signalPod("Succeeded", false, "2") })

		in := rt.input(true, RunnerTimings{})
		in.PoolWorkflowID = "pool/ci/runnerdeployment/app"
		done := rt.runInput(in)
		require.Equal(t, EndCompleted, done.Reason)
		require.Equal(t, tc.published, *published, "revision %d", tc.revision)
		require.Equal(t, RunnerPhase(tc.published[len(tc.published)-1]), during, "revision %d while its job runs", tc.revision)
	}
}
