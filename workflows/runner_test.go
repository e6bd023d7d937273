package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

func TestStopUnregistersBeforeDeletingThePod(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(3 * time.Second)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() {
			var state RunnerState
			state = rt.state()
			require.Equal(t, PhaseIdle, state.Phase)
			require.Equal(t, int64(42), state.RunnerID)
			rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"})
		})

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		// Lookups until it registers (how many depends on when the pod signal came), then the stop.
		require.Equal(t, []string{"EnsureRunnerPod", "FindRunner", "RemoveRunner", "DeleteRunnerPod"}, slices.Compact(rt.names()))
	})
}

func TestRegistrationTimeoutDeletesThePod(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(-1)
		rt.after(5*time.Second, func() { rt.signalPod("Running", true, "1") })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndRegistrationTimeout, done.Reason)
		require.Zero(t, rt.count("RemoveRunner"))
		tail := afterTimeoutDelete(revision)
		names := rt.names()
		require.Equal(t, tail, names[len(names)-len(tail):], "after the delete it checks that nothing registered late")
		deleted := rt.calls[len(rt.calls)-len(tail)]
		require.Equal(t, 5*time.Second+10*time.Minute, deleted.at, "10 minutes after the pod became Ready")
		// Backoff: 2s, 4s, 8s, 16s, then every 30s; not a poll a second.
		require.Less(t, rt.count("FindRunner")-(len(tail)-1), 24, "checks before the delete")
	})
}

func TestStaticBusyRunnerIsRetriedEveryMinute(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove(busyErr(), busyErr())
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(10*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })

		done := rt.run(false, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		var removes []time.Duration
		for _, c := range rt.calls {
			if c.name == "RemoveRunner" {
				removes = append(removes, c.at)
			}
		}
		require.Len(t, removes, 3)
		require.Equal(t, time.Minute, removes[1]-removes[0])
		require.Equal(t, time.Minute, removes[2]-removes[1])
		require.Equal(t, "DeleteRunnerPod", rt.calls[len(rt.calls)-1].name, "the pod goes only after GitHub let the runner go")
	})
}

func TestEphemeralBusyRunnerWaitsForItsJobWithoutMoreCalls(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove(busyErr())
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(10*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })
		rt.after(45*time.Minute, func() { rt.signalPod("Succeeded", false, "2") })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason, "the first reason is kept")
		require.Equal(t, 1, rt.count("RemoveRunner"), "no RemoveRunner sure to fail while the job runs")
		last := rt.calls[len(rt.calls)-1]
		require.Equal(t, "DeleteRunnerPod", last.name)
		require.Equal(t, 45*time.Minute, last.at)
	})
}

func TestRateLimitWaitsUntilTheReset(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove(rateLimitErr(rt.start.Add(20 * time.Minute)))
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(10*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })

		rt.run(false, RunnerTimings{})
		var removes []time.Duration
		for _, c := range rt.calls {
			if c.name == "RemoveRunner" {
				removes = append(removes, c.at)
			}
		}
		require.Len(t, removes, 2)
		require.Equal(t, 20*time.Minute, removes[1])
	})
}

func TestEphemeralCompletionMakesNoRemoveRunnerCall(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(20*time.Minute, func() { rt.signalPod("Succeeded", false, "2") })

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndCompleted, done.Reason)
		require.Zero(t, rt.count("RemoveRunner"))
		require.Equal(t, []string{"EnsureRunnerPod", "FindRunner", "DeleteRunnerPod"}, rt.names())
	})
}

func TestPodDeletedBySomeoneElseIsUnregisteredAndReported(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		var told RunnerDone
		var signals []string
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(name string, arg []byte) {
			signals = append(signals, name)
			switch name {
			case contract.SignalRunnerDone:
				require.NoError(t, json.Unmarshal(arg, &told))
			case contract.SignalRunnerRegistered:
				require.JSONEq(t, `{"Name":"app-runner-x1"}`, string(arg))
			}
		})
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(5*time.Minute, rt.signalPodDeleted)

		in := rt.input(true, RunnerTimings{})
		in.PoolWorkflowID = "pool/ci/runnerdeployment/app"
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		require.Equal(t, RunnerDone{Name: "app-runner-x1", Reason: EndPodDeleted, RunnerID: 42, Cause: activities.CausePodDeleted}, told,
			"deleted by someone else, for no reason Kubernetes recorded")
		require.Equal(t, []string{contract.SignalRunnerRegistered, contract.SignalRunnerDone}, signals)
		require.Equal(t, []string{"EnsureRunnerPod", "FindRunner", "RemoveRunner", "DeleteRunnerPod"}, rt.names())
	})
}

func TestFailedPodIsReportedAsFailed(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() { rt.signalPod("Failed", false, "2") })
		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndPodFailed, done.Reason)
		require.Equal(t, activities.CauseRunnerDied, done.Cause)
		require.Equal(t, 1, rt.count("RemoveRunner"))
	})
}

// The cause Kubernetes recorded on the pod (here the pod GC's DisruptionTarget
// of a lost node, read by the pod watcher from the deleted pod) is the
// runner's; a runner the pool stopped has none, though its pod went too.
func TestRunnerEndsWithTheCauseOfItsPodsLoss(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() {
			rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{UID: "uid-1", ResourceVersion: "deleted/3", Cause: activities.CauseNodeLost})
		})
		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndPodDeleted, done.Reason)
		require.Equal(t, activities.CauseNodeLost, done.Cause)
	})
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale down"}) })
		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason)
		require.Empty(t, done.Cause)
	})
}

func TestLateRegistrationAfterStopIsRemoved(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		// Not listed when the stop arrives; listed once the pod is gone.
		rt.env.OnActivity(gh.FindRunner, mock.Anything, mock.Anything).Return(
			func(_ context.Context, _ activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
				rt.record("FindRunner")
				if rt.count("DeleteRunnerPod") > 0 {
					return activities.FindRunnerOutput{Found: true, ID: 42}, nil
				}
				return activities.FindRunnerOutput{}, nil
			})
		rt.mockRemove()
		rt.after(500*time.Millisecond, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })

		rt.run(true, RunnerTimings{})
		names := rt.names()
		require.Equal(t, []string{"DeleteRunnerPod", "FindRunner", "RemoveRunner", "DeleteRunnerPod"}, names[len(names)-4:])
	})
}

// A runner stopped while its pod is Pending is deleted at once, but its
// process may start and finish registering in the pod's termination grace
// period: the last look for a registration waits for the pod to be gone
// (RunnerRevisionRecheckAfterPodGone), so one made then is removed too.
func TestARegistrationMadeWhileThePodTerminatesIsRemoved(t *testing.T) {
	rt := newRunnerTest(t, RunnerRevisionRecheckAfterPodGone)
	rt.mockPod()
	deletedAt := func() (time.Duration, bool) {
		for _, c := range rt.calls {
			if c.name == "DeleteRunnerPod" {
				return c.at, true
			}
		}
		return 0, false
	}
	rt.env.OnActivity(gh.FindRunner, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
			rt.record("FindRunner")
			if at, ok := deletedAt(); ok && rt.env.Now().Sub(rt.start)-at >= 2*time.Second {
				return activities.FindRunnerOutput{Found: true, ID: 42}, nil // registered 2 s into the grace period
			}
			return activities.FindRunnerOutput{}, nil
		})
	rt.mockRemove()
	// Stopped while its pod is Pending, as far as the runner knows: deleted at
	// once, while its container starts and registers.
	rt.after(time.Second, func() { rt.signalPod("Pending", false, "1") })
	rt.after(2*time.Second, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })
	rt.after(10*time.Second, func() { rt.signalPodDeleted() })
	rt.run(true, RunnerTimings{})
	at, ok := deletedAt()
	require.True(t, ok)
	require.Less(t, at, 3*time.Second, "the deletion was asked at the stop")
	names := rt.names()
	require.Equal(t, []string{"DeleteRunnerPod", "FindRunner", "FindRunner", "RemoveRunner"}, names[len(names)-4:],
		"a look as the deletion is asked, and one once the pod is gone")
}

func TestRunnerWhosePodVanishedWhileBusyIsLeftAfterRetries(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove(busyErr(), busyErr(), busyErr(), busyErr(), busyErr(), busyErr(), busyErr())
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, rt.signalPodDeleted)

		done := rt.run(true, RunnerTimings{OrphanRetries: 3})
		require.Equal(t, EndLeftRegistered, done.Reason)
		require.Equal(t, 4, rt.count("RemoveRunner"))
	})
}

func TestDuplicateAndForeignPodSignalsChangeNothing(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		// A Succeeded pod with another UID is an older pod of the same name.
		rt.after(2*time.Second, func() {
			rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{UID: "old-uid", ResourceVersion: "9", Exists: true, Phase: "Succeeded"})
		})
		rt.after(time.Minute, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })
		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndStopped, done.Reason, "not completed: the foreign pod's exit was ignored")
		require.Equal(t, 1, rt.count("RemoveRunner"))
	})
}

func TestInvalidPodSpecEndsTheRunner(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.env.OnActivity(kube.EnsureRunnerPod, mock.Anything, mock.Anything).Return(activities.RunnerPodOutput{},
			temporal.NewNonRetryableApplicationError("invalid", activities.ErrTypeInvalidSpec, nil))
		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndCreateFailed, done.Reason)
	})
}

func TestLongRegistrationContinuesAsNewWithItsState(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(-1)
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(3*time.Minute, func() { rt.env.SetCurrentHistoryLength(5000) })
		rt.env.ExecuteWorkflow(RunnerWorkflow, rt.input(true, RunnerTimings{}))
		next := continuedWith[RunnerInput](t, rt.env)
		require.NotNil(t, next.State)
		require.Equal(t, PhaseRegistering, next.State.Phase)
		require.Equal(t, "uid-1", next.State.Pod.UID)
		require.True(t, next.State.Pod.Ready)
		require.Positive(t, next.State.Polls)

		// The next run keeps the timeout's start: it fires 10 minutes after Ready, not
		// 10 minutes after the continue-as-new.
		rt2 := newRunnerTest(t, revision)
		rt2.env.SetStartTime(rt.env.Now())
		rt2.start = rt.start
		rt2.mockPod()
		rt2.mockFind(-1)
		rt2.env.ExecuteWorkflow(RunnerWorkflow, next)
		require.NoError(t, rt2.env.GetWorkflowError())
		var done RunnerDone
		require.NoError(t, rt2.env.GetWorkflowResult(&done))
		require.Equal(t, EndRegistrationTimeout, done.Reason)
		require.Zero(t, rt2.count("EnsureRunnerPod"), "the pod is not created again")
		for _, c := range rt2.calls {
			if c.name == "DeleteRunnerPod" {
				require.Equal(t, 10*time.Minute+time.Second, c.at)
			}
		}
	})
}

func TestRegistrationOnlyRunnerReleasesItsPodAndStaysRegistered(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.mockPod()
		rt.mockFind(0)
		rt.mockRemove()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(2*time.Minute, func() {
			require.Equal(t, []string{"EnsureRunnerPod", "FindRunner", "DeleteRunnerPod"}, rt.names(), "registered, then the pod goes")
			rt.signalPodDeleted() // the released pod's deletion changes nothing
		})
		rt.after(time.Hour, func() {
			require.Zero(t, rt.count("RemoveRunner"), "it stays registered")
			rt.env.SignalWorkflow(contract.SignalStop, StopRequest{})
		})
		in := rt.input(true, RunnerTimings{})
		in.RegistrationOnly = true
		rt.env.ExecuteWorkflow(RunnerWorkflow, in)
		require.NoError(t, rt.env.GetWorkflowError())
		var done RunnerDone
		require.NoError(t, rt.env.GetWorkflowResult(&done))
		require.Equal(t, EndStopped, done.Reason)
		names := rt.names()
		require.Equal(t, []string{"RemoveRunner", "DeleteRunnerPod"}, names[len(names)-2:])
	})
}

// The runner-state search attribute follows the phases a runner waits in. From
// RunnerRevisionRegisteringAtStart the start shows Registering, so that phase
// costs no upsert; a creation that waits (a rate limit) still shows Creating.
func TestRunnerStatePublishedOnlyWhereItWaits(t *testing.T) {
	for _, c := range []struct {
		revision  int
		rateLimit bool
		want      []string
	}{
		{RunnerRevisionLocal, false, []string{"Registering", "Idle", "Done"}},
		{RunnerRevisionRegisteringAtStart, false, []string{"Idle", "Done"}},
		{RunnerRevisionRegisteringAtStart, true, []string{"Creating", "Registering", "Idle", "Done"}},
	} {
		t.Run(fmt.Sprintf("revision-%d-rate-limited-%v", c.revision, c.rateLimit), func(t *testing.T) {
			rt := newRunnerTest(t, c.revision)
			created := false
			rt.env.OnActivity(kube.EnsureRunnerPod, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.RunnerPodInput) (activities.RunnerPodOutput, error) {
					if c.rateLimit && !created {
						created = true
						return activities.RunnerPodOutput{}, rateLimitErr(rt.env.Now().Add(time.Minute))
					}
					return activities.RunnerPodOutput{UID: "uid-1", Created: true, PoolToken: true}, nil
				})
			rt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(nil)
			rt.mockFind(0)
			rt.mockRemove()
			var published []string
			rt.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
				state, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(contract.SearchAttrRunnerState)
				published = append(published, state)
			}).Return(nil)
			rt.after(2*time.Minute, func() { rt.signalPod("Running", true, "1") })
			rt.after(5*time.Minute, func() { rt.signalPod("Succeeded", false, "2") })
			rt.run(true, RunnerTimings{})
			require.Equal(t, c.want, published)
		})
	}
}
