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

// The incident of issue 27: a scale-down stop reaches a runner whose pod is
// Running but whose runner has not registered yet; 1 ms after the stop it
// registers and GitHub hands it a job. The pod must not be deleted under the
// job: the runner waits for its registration, RemoveRunner answers 422, and
// the pod goes only after the job ended and the runner exited.
func TestStopWhileRegisteringNeverDeletesARunnerThatTookAJob(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		const stopAt = 10 * time.Second
		registeredAt := stopAt + time.Millisecond
		jobEnds := stopAt + 2*time.Minute
		rt.env.OnActivity(gh.FindRunner, mock.Anything, mock.Anything).Return(
			func(_ context.Context, _ activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
				rt.record("FindRunner")
				now := rt.env.Now().Sub(rt.start)
				if now < registeredAt {
					return activities.FindRunnerOutput{}, nil
				}
				return activities.FindRunnerOutput{Found: true, ID: 42, Online: true, Busy: now < jobEnds}, nil
			})
		rt.env.OnActivity(gh.RemoveRunner, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in activities.RemoveRunnerInput) (activities.RemoveRunnerOutput, error) {
				require.Equal(t, int64(42), in.ID)
				rt.record("RemoveRunner")
				if rt.env.Now().Sub(rt.start) < jobEnds {
					return activities.RemoveRunnerOutput{}, busyErr()
				}
				return activities.RemoveRunnerOutput{}, nil
			})
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(stopAt, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })
		rt.after(jobEnds+time.Second, func() { rt.signalPod("Succeeded", false, "2") })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		for _, c := range rt.calls {
			if c.name == "DeleteRunnerPod" {
				require.Greater(t, c.at, jobEnds, "the pod is deleted only after its job ended")
			}
		}
		require.Equal(t, 1, rt.count("DeleteRunnerPod"))
		require.Equal(t, 1, rt.count("RemoveRunner"), "422 once; then the ephemeral runner is left to finish")
	})
}

// A stop that arrives while the runner registers, and no job comes: the
// runner is removed from GitHub (204) once it is listed, then its pod goes.
func TestStopWhileRegisteringRemovesTheRunnerOnceListed(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(20 * time.Second)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(3*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		names := rt.names()
		require.Equal(t, []string{"FindRunner", "RemoveRunner", "DeleteRunnerPod"}, names[len(names)-3:],
			"found, removed, and only then deleted")
		for _, c := range rt.calls {
			if c.name == "DeleteRunnerPod" {
				require.GreaterOrEqual(t, c.at, 20*time.Second, "not deleted while it could still register")
			}
		}
	})
}

// A runner stopped while it waits for its registration, once found, ends the
// workflow task before it removes the runner (RunnerRevisionFoundBeforeRemoval):
// the removal cannot be undone, and a worker that died after it lost the
// task's calls, so the task's retry found no runner and waited for a
// registration that had come and gone. The 1 ms timer between the finding
// check and the removal is that task's end; the revision before has none.
func TestStopWhileRegisteringRecordsTheRegistrationBeforeTheRemoval(t *testing.T) {
	for _, tc := range []struct {
		revision int
		want     []string
	}{
		{RunnerRevisionBusyAfterIdle, []string{"FindRunner", "RemoveRunner", "DeleteRunnerPod"}},
		{RunnerRevisionFoundBeforeRemoval, []string{"FindRunner", "task ended", "RemoveRunner", "DeleteRunnerPod"}},
	} {
		rt := newRunnerTest(t, tc.revision)
		rt.mockPod()
		rt.mockFind(20 * time.Second)
		rt.mockRemove()
		rt.env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
			if d == time.Millisecond {
				rt.record("task ended")
			}
		})
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(3*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		names := rt.names()
		require.Equal(t, tc.want, names[len(names)-len(tc.want):], "revision %d", tc.revision)
	}
}

// A runner that never registers is deleted at its registration timeout, as it
// would be without the stop, and the pool hears why.
func TestStopWhileRegisteringEndsAtTheRegistrationTimeout(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(-1)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(3*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndRegistrationTimeout, done.Reason)
		require.Zero(t, rt.count("RemoveRunner"), "nothing registered, nothing to remove")
		tail, names := afterTimeoutDelete(revision), rt.names()
		require.Equal(t, tail, names[len(names)-len(tail):], "after the delete it checks for a late registration")
		for _, c := range rt.calls {
			if c.name == "DeleteRunnerPod" {
				require.GreaterOrEqual(t, c.at, 10*time.Minute+time.Second)
			}
		}
	})
}

// A pod that is still Pending runs no process that could register: a stop
// deletes it at once, then looks once for a registration that slipped in.
func TestStopWhilePendingDeletesAtOnce(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(-1)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Pending", false, "1") })
		rt.after(3*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		require.Zero(t, rt.count("RemoveRunner"))
		for _, c := range rt.calls {
			if c.name == "DeleteRunnerPod" {
				require.Less(t, c.at, 4*time.Second, "deleted at the stop")
			}
		}
	})
}

// A JIT runner asked to stop before its pod is Ready is removed from GitHub by
// its ID first, so a late start of its runner fails, and only then deleted.
func TestStopJITRunnerBeforeStartRemovesItsRegistrationFirst(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPodCreated(activities.RunnerPodOutput{UID: "uid-1", Created: true, RunnerID: 42})
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", false, "1") })
		rt.after(2*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) })

		in := rt.input(true, RunnerTimings{})
		in.Pod.JIT = true
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		require.Equal(t, []string{"EnsureRunnerPod", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
	})
}

// A patient runner (its pool hears its job start from a delivery) checks its
// registration once soon, then every RegistrationPollMax, each check on a list
// up to a minute old: no backoff of checks that would find the same list.
func TestAPatientRunnerChecksItsRegistrationEvery30s(t *testing.T) {
	rt, patient := runPatientRunner(t, 90*time.Second, 3*time.Minute, StopRequest{})
	var checks []time.Duration
	for _, c := range rt.calls {
		if c.name == "FindRunner" {
			checks = append(checks, c.at)
		}
	}
	require.Equal(t, []time.Duration{2 * time.Second, 32 * time.Second, 62 * time.Second, 92 * time.Second}, checks)
	require.Equal(t, []bool{true, true, true, true}, patient, "each on the patient list")
}

// runPatientRunner runs a runner with patient registration checks whose pod
// runs at 1 s, which GitHub lists from listedAt, and which is asked to stop at
// stopAt. It returns the test and whether each FindRunner was patient.
func runPatientRunner(t *testing.T, listedAt, stopAt time.Duration, stop StopRequest) (*runnerTest, []bool) {
	rt := newRunnerTest(t, RunnerRevisionLocal)
	rt.mockPod()
	var patient []bool
	rt.env.OnActivity(gh.FindRunner, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
			rt.record("FindRunner")
			patient = append(patient, in.Patient)
			if rt.env.Now().Sub(rt.start) >= listedAt {
				return activities.FindRunnerOutput{Found: true, ID: 42, Online: true}, nil
			}
			return activities.FindRunnerOutput{}, nil
		})
	rt.mockRemove()
	rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
	rt.after(stopAt, func() { rt.env.SignalWorkflow(contract.SignalStop, stop) })
	in := rt.input(true, RunnerTimings{})
	in.PatientRegistration = true
	rt.env.ExecuteWorkflow(RunnerWorkflow, in)
	require.NoError(t, rt.env.GetWorkflowError())
	return rt, patient
}

// A patient runner asked to stop before it was seen registered makes its next
// checks usual ones, not patient ones on a list up to a minute old: the stop
// waits on those checks.
func TestAStopMakesAPatientRunnerCheckItsRegistrationPromptly(t *testing.T) {
	rt, patient := runPatientRunner(t, 40*time.Second, 33*time.Second, StopRequest{Reason: "scale-down"})
	var deleted time.Duration
	for _, c := range rt.calls {
		if c.name == "DeleteRunnerPod" {
			deleted = c.at
		}
	}
	require.Equal(t, []bool{true, true}, patient[:2], "patient checks before the stop (2 s, 32 s)")
	require.NotContains(t, patient[2:], true, "no patient check once stopping")
	// The timer in flight at the stop (32 s + 30 s) still runs out; the check
	// it wakes is a usual one, which finds the runner, where a patient one
	// might read a list from before the registration and wait 30 s more.
	require.LessOrEqual(t, deleted, 62*time.Second, "removed at the first check after the stop: %v", deleted)
	require.GreaterOrEqual(t, deleted, 40*time.Second, "not deleted before it was listed")
}
