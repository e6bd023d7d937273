package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// untoldTest is a runner of RunnerRevisionReadyUntold whose pod's start and
// readiness are not signalled; podReadyAt is when its pod turned Ready (the
// pod's condition, as GetRunnerPod reads it).
func untoldTest(t *testing.T, podReadyAt time.Duration) (*runnerTest, RunnerInput, *[]bool) {
	rt := newRunnerTest(t, RunnerRevisionReadyUntold)
	var created []bool
	rt.env.OnActivity(kube.EnsureRunnerPod, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RunnerPodInput) (activities.RunnerPodOutput, error) {
			created = append(created, in.ReadyUntold)
			rt.record("EnsureRunnerPod")
			return activities.RunnerPodOutput{UID: "uid-1", Created: true, PoolToken: true}, nil
		})
	rt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.PodRef) error {
			rt.record("DeleteRunnerPod")
			return nil
		})
	rt.env.OnActivity(kube.GetRunnerPod, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.PodRef) (activities.PodState, error) {
			rt.record("GetRunnerPod")
			return activities.PodState{UID: "uid-1", ResourceVersion: "read", Exists: true, Phase: corePhase("Running"), Ready: true,
				ReadySince: rt.start.Add(podReadyAt)}, nil
		})
	rt.onPoolSignal("pool/ci/runnerdeployment/app", func(string, []byte) {})
	in := rt.input(true, RunnerTimings{})
	in.StartsTold, in.PoolWorkflowID, in.Pod.ReadyUntold = true, "pool/ci/runnerdeployment/app", true
	return rt, in, &created
}

// A job's start comes before the runner's first registration check: it never
// needed its pod's readiness, and nobody sent it.
func TestAnUntoldRunnerNeedsNoReadySignal(t *testing.T) {
	rt, in, created := untoldTest(t, time.Second)
	rt.mockFind(0)
	rt.after(12*time.Second, func() {
		rt.env.SignalWorkflow(contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
	})
	rt.after(40*time.Second, func() { rt.signalPod("Succeeded", false, "2") })
	done := rt.runInput(in)
	require.Equal(t, EndCompleted, done.Reason)
	require.Equal(t, []bool{true}, *created, "its pod is marked ready-untold")
	require.Zero(t, rt.count("GetRunnerPod"), "its pod's readiness was never needed")
	require.Zero(t, rt.count("FindRunner"))
}

// With no job's start, each registration check reads the pod first, and the
// registration timeout runs from the pod's Ready condition, as it would from
// a signal: Ready at 2 min, never registered, deleted 10 minutes after.
func TestAnUntoldRunnerTimesOutFromItsPodsReadyCondition(t *testing.T) {
	rt, in, _ := untoldTest(t, 2*time.Minute)
	rt.mockFind(-1)
	rt.mockRemove()
	rt.after(30*time.Minute, rt.signalPodDeleted) // ends a runner that never times out
	done := rt.runInput(in)
	require.Equal(t, EndRegistrationTimeout, done.Reason)
	var deletedAt time.Duration
	for _, c := range rt.calls {
		if c.name == "DeleteRunnerPod" {
			deletedAt = c.at
		}
	}
	require.GreaterOrEqual(t, deletedAt, 12*time.Minute, "not before 10 minutes Ready")
	require.Less(t, deletedAt, 12*time.Minute+RunnerTimings{}.withDefaults().RegistrationPollMax+time.Second, "within a check interval of it")
	require.Equal(t, rt.count("FindRunner"), rt.count("GetRunnerPod"), "a pod read before each check")
}

// A stop while it registers reads the pod, so a Running pod whose runner may
// register at any moment is waited for as before (stopAwaitsRegistration).
func TestAnUntoldRunnerReadsItsPodWhenStopped(t *testing.T) {
	rt, in, _ := untoldTest(t, time.Second)
	rt.mockFind(20 * time.Second)
	rt.mockRemove()
	rt.after(5*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })
	done := rt.runInput(in)
	require.Equal(t, EndStopped, done.Reason)
	require.Equal(t, "GetRunnerPod", rt.calls[1].name, "the stop read the pod first")
	require.Contains(t, rt.names(), "RemoveRunner", "its Running pod's runner was waited for and removed, not its pod deleted unseen")
}

// A runner that waits for its pool's check starts no timer while it waits for
// its job's start.
func TestARunnerWaitingForItsPoolStartsNoTimer(t *testing.T) {
	rt, in, _ := untoldTest(t, time.Second)
	in.Revision, in.PoolWakes = RunnerRevisionPoolWakes, true
	rt.mockFind(0)
	timers := 0
	rt.env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	rt.after(3*time.Minute, func() {
		rt.env.SignalWorkflow(contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
	})
	rt.after(4*time.Minute, func() { rt.signalPod("Succeeded", false, "2") })
	done := rt.runInput(in)
	require.Equal(t, EndCompleted, done.Reason)
	require.Zero(t, timers, "no timer of its own")
	require.Equal(t, []string{"EnsureRunnerPod", "DeleteRunnerPod"}, rt.names())
}

// Its pool's check stands for its first timer: it reads its pod and checks
// GitHub, and from then on keeps a timer of its own, timing out from its
// pod's Ready condition as before.
func TestAPoolsCheckWakesARunnerThatNeverRegistered(t *testing.T) {
	rt, in, _ := untoldTest(t, time.Minute)
	in.Revision, in.PoolWakes = RunnerRevisionPoolWakes, true
	rt.mockFind(-1)
	rt.mockRemove()
	rt.after(10*time.Minute, func() { rt.env.SignalWorkflow(contract.SignalRegistrationCheck, nil) })
	rt.after(30*time.Minute, rt.signalPodDeleted) // ends a runner that never times out
	done := rt.runInput(in)
	require.Equal(t, EndRegistrationTimeout, done.Reason)
	require.Equal(t, "GetRunnerPod", rt.calls[1].name)
	require.Equal(t, 10*time.Minute, rt.calls[1].at, "nothing before the pool's check")
	var deletedAt time.Duration
	for _, c := range rt.calls {
		if c.name == "DeleteRunnerPod" {
			deletedAt = c.at
		}
	}
	require.GreaterOrEqual(t, deletedAt, 11*time.Minute, "not before 10 minutes Ready")
	require.Less(t, deletedAt, 11*time.Minute+RunnerTimings{}.withDefaults().RegistrationPollMax+time.Second)
}
