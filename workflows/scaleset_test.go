package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

var scaleSets *activities.ScaleSets

const (
	listenerHRA  = "hra/ci/linux"
	listenerPool = "pool/ci/runnerdeployment/linux"
)

func listenerSpec() ScaleSetSpec {
	return ScaleSetSpec{Namespace: "ci", Kind: "RunnerDeployment", Pool: "linux", Scope: registry.Scope{Organization: "octo"},
		Name: "arc-linux", Labels: []string{"arc-linux"}, MaxRunners: 10, Autoscaler: listenerHRA}
}

// listenerTest runs a listener against scripted polls: each poll takes the
// next of polls (ending the script deletes the listener); what it sent the
// autoscaler and the pool is kept.
type listenerTest struct {
	testsuite.WorkflowTestSuite
	env    *testsuite.TestWorkflowEnvironment
	mu     sync.Mutex
	polls  []calls.PollScaleSetInput
	sent   []contract.ScaleSetMessage
	told   []contract.ScaleSetID
	closed []string
	opens  []calls.OpenScaleSetSessionInput
	// reports are the ScaleSetSession conditions the listener wrote.
	reports []calls.ScaleSetSessionReport
	// pollCall is the poll's mock, for a test to delay it (After).
	pollCall *testsuite.MockCallWrapper
}

func newListenerTest(t *testing.T, script []calls.PollScaleSetOutput) *listenerTest {
	return newListenerTestWith(t, func(lt *listenerTest, polls int) (calls.PollScaleSetOutput, error) {
		if polls > len(script) {
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
			return calls.PollScaleSetOutput{}, nil
		}
		return script[polls-1], nil
	})
}

// newListenerTestWith answers the n-th poll (from 1) with poll.
func newListenerTestWith(_ *testing.T, poll func(lt *listenerTest, n int) (calls.PollScaleSetOutput, error)) *listenerTest {
	lt := &listenerTest{}
	lt.env = lt.NewTestWorkflowEnvironment()
	lt.env.OnActivity(scaleSets.EnsureScaleSet, mock.Anything, mock.Anything).Return(calls.EnsureScaleSetOutput{ID: 7, RunnerGroupID: 1, Created: true}, nil)
	lt.env.OnActivity(scaleSets.OpenScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.OpenScaleSetSessionInput) (calls.OpenScaleSetSessionOutput, error) {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.opens = append(lt.opens, in)
			return calls.OpenScaleSetSessionOutput{SessionID: "s1", Statistics: calls.ScaleSetStatistics{Assigned: 2, Available: 1}}, nil
		})
	lt.mockReports()
	lt.env.OnActivity(scaleSets.CloseScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.CloseScaleSetSessionInput) error {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.closed = append(lt.closed, in.SessionID)
			return nil
		})
	lt.pollCall = lt.env.OnActivity(scaleSets.PollScaleSet, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.polls = append(lt.polls, in)
			return poll(lt, len(lt.polls))
		})
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerHRA, "", contract.SignalScaleSet, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.sent = append(lt.sent, arg.(contract.ScaleSetMessage))
			return nil
		})
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerPool, "", contract.SignalScaleSetID, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.told = append(lt.told, arg.(contract.ScaleSetID))
			return nil
		})
	return lt
}

// mockReports records the ScaleSetSession conditions the listener writes.
func (lt *listenerTest) mockReports() {
	lt.env.OnActivity(kube.ReportScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.ScaleSetSessionReport) error {
			lt.mu.Lock()
			defer lt.mu.Unlock()
			lt.reports = append(lt.reports, in)
			return nil
		})
}

func message(id int64, assigned int, jobs ...calls.ScaleSetJob) calls.PollScaleSetOutput {
	return calls.PollScaleSetOutput{Message: &calls.ScaleSetQueueMessage{ID: id, Statistics: calls.ScaleSetStatistics{Assigned: assigned}, Jobs: jobs}}
}

func TestAListenerRecordsEachMessageBeforeItIsDeleted(t *testing.T) {
	lt := newListenerTest(t, []calls.PollScaleSetOutput{
		message(100, 1, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}),
		message(101, 1, calls.ScaleSetJob{Type: "JobStarted", JobID: "j1", RunnerName: "linux-a", RunnerID: 5}),
		message(102, 0, calls.ScaleSetJob{Type: "JobCompleted", JobID: "j1", RunnerName: "linux-a", RunnerID: 5, Result: "succeeded"}),
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.True(t, lt.env.IsWorkflowCompleted())
	require.NoError(t, lt.env.GetWorkflowError())

	require.Equal(t, []contract.ScaleSetID{{ID: 7, Name: "arc-linux"}}, lt.told, "the pool learns its set's id")
	require.Len(t, lt.polls, 4)
	for i, want := range []struct{ last, ack int64 }{{0, 0}, {100, 100}, {101, 101}, {102, 102}} {
		require.Equal(t, want.last, lt.polls[i].LastMessageID, "poll %d's cursor", i)
		require.Equal(t, want.ack, lt.polls[i].AckMessageID, "poll %d deletes the message recorded before it", i)
		require.Equal(t, 10, lt.polls[i].MaxCapacity)
	}
	require.True(t, lt.polls[0].AcquireListed, "a new session acquires what waits")
	require.False(t, lt.polls[1].AcquireListed)

	require.Len(t, lt.sent, 4, "the session's statistics, then one signal per message")
	require.Equal(t, 2, lt.sent[0].Assigned, "the level from the session's statistics")
	require.Equal(t, []int{1, 1, 0}, []int{lt.sent[1].Assigned, lt.sent[2].Assigned, lt.sent[3].Assigned})
	require.Len(t, lt.sent[1].Events, 1, "an assignment is in the level; its event is the job's arrival alone")
	require.Equal(t, "queued", lt.sent[1].Events[0].Action)
	require.Equal(t, "in_progress", lt.sent[2].Events[0].Action)
	require.Equal(t, "linux-a", lt.sent[2].Events[0].RunnerName)
	require.Equal(t, contract.ScaleSetJobKey("j1"), lt.sent[2].Events[0].JobID)
	require.Equal(t, "completed", lt.sent[3].Events[0].Action)
	require.Equal(t, "success", lt.sent[3].Events[0].Conclusion)
	require.Equal(t, []string{"s1"}, lt.closed, "deleting the listener closes its session")
}

func TestARedeliveredStartIsNotSentTwice(t *testing.T) {
	started := calls.ScaleSetJob{Type: "JobStarted", JobID: "j1", RunnerName: "linux-a", RunnerID: 5}
	lt := newListenerTest(t, []calls.PollScaleSetOutput{
		message(100, 1, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}, started),
		message(101, 1, started, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}),
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	actions := map[string]int{}
	for _, m := range lt.sent {
		for _, ev := range m.Events {
			actions[ev.Action]++
		}
	}
	require.Equal(t, map[string]int{"queued": 1, "in_progress": 1}, actions,
		"the same start twice, and a stale assignment after it, change nothing")
}

func TestAWithdrawnJobIsNoEnd(t *testing.T) {
	lt := newListenerTest(t, []calls.PollScaleSetOutput{
		message(100, 1, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}),
		message(101, 0, calls.ScaleSetJob{Type: "JobCompleted", JobID: "j1", Result: "canceled"}),
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Empty(t, lt.sent[2].Events, "no runner took it: the service assigns it again")
}

// Another session holds the set: the first open says who (the pool hears it
// once), and the next opens wait it out in their activity, minutes each, so
// the set is taken within seconds of its release for one activity per wait.
func TestASessionConflictIsWaitedOutInTheActivity(t *testing.T) {
	lt := &listenerTest{}
	lt.env = lt.NewTestWorkflowEnvironment()
	var opens []calls.OpenScaleSetSessionInput
	var at []time.Time
	lt.env.OnActivity(scaleSets.EnsureScaleSet, mock.Anything, mock.Anything).Return(calls.EnsureScaleSetOutput{ID: 7, RunnerGroupID: 1}, nil)
	lt.env.OnActivity(scaleSets.OpenScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.OpenScaleSetSessionInput) (calls.OpenScaleSetSessionOutput, error) {
			opens, at = append(opens, in), append(at, lt.env.Now())
			if len(opens) <= 3 {
				return calls.OpenScaleSetSessionOutput{Conflict: true, Holder: "an active session for owner arc-listener"}, nil
			}
			return calls.OpenScaleSetSessionOutput{SessionID: "s2"}, nil
		}).After(5 * time.Minute)
	lt.env.OnActivity(scaleSets.PollScaleSet, mock.Anything, mock.Anything).Return(
		func(context.Context, calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
			return calls.PollScaleSetOutput{}, nil
		})
	lt.mockReports()
	lt.env.OnActivity(scaleSets.CloseScaleSetSession, mock.Anything, mock.Anything).Return(nil)
	lt.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil)
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, opens, 4)
	require.Zero(t, opens[0].WaitOnConflict, "the first open says at once who holds the set")
	for i := 1; i < len(opens); i++ {
		require.Equal(t, sessionConflictActivityWait, opens[i].WaitOnConflict, "open %d waits in its activity", i)
		require.Equal(t, 5*time.Minute, at[i].Sub(at[i-1]).Round(time.Second), "no timer between opens")
	}
	pool := calls.PoolResourceRef{Namespace: "ci", Kind: "RunnerDeployment", Name: "linux"}
	require.Equal(t, []calls.ScaleSetSessionReport{
		{Pool: pool, ScaleSetID: 7, Holder: "an active session for owner arc-listener"},
		{Pool: pool, ScaleSetID: 7},
	}, lt.reports, "the pool hears once who holds the set, and once that its listener does")
}

// An open that comes back with a conflict at once although asked to wait (a
// worker from before WaitOnConflict) is followed by a timer, 5 s doubling to
// 60 s: the listener never spins.
func TestAConflictThatCameBackAtOnceWaitsOnATimer(t *testing.T) {
	lt := &listenerTest{}
	lt.env = lt.NewTestWorkflowEnvironment()
	var opens []time.Time
	lt.env.OnActivity(scaleSets.EnsureScaleSet, mock.Anything, mock.Anything).Return(calls.EnsureScaleSetOutput{ID: 7, RunnerGroupID: 1}, nil)
	lt.env.OnActivity(scaleSets.OpenScaleSetSession, mock.Anything, mock.Anything).Return(
		func(context.Context, calls.OpenScaleSetSessionInput) (calls.OpenScaleSetSessionOutput, error) {
			opens = append(opens, lt.env.Now())
			if len(opens) <= 5 {
				return calls.OpenScaleSetSessionOutput{Conflict: true}, nil
			}
			return calls.OpenScaleSetSessionOutput{SessionID: "s2"}, nil
		})
	lt.env.OnActivity(scaleSets.PollScaleSet, mock.Anything, mock.Anything).Return(
		func(context.Context, calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
			return calls.PollScaleSetOutput{}, nil
		})
	lt.mockReports()
	lt.env.OnActivity(scaleSets.CloseScaleSetSession, mock.Anything, mock.Anything).Return(nil)
	lt.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", mock.Anything, mock.Anything).Return(nil)
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, opens, 6)
	var waits []time.Duration
	for i := 1; i < len(opens); i++ {
		waits = append(waits, opens[i].Sub(opens[i-1]).Round(time.Second))
	}
	require.Equal(t, []time.Duration{0, 5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}, waits, "the first open's answer is no wait; then backoff from 5 s")
}

func TestADeletedSetIsFoundAgainAndTheCursorStartsOver(t *testing.T) {
	lt := newListenerTest(t, []calls.PollScaleSetOutput{
		message(100, 1, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}),
		{SetGone: true},
		message(5, 1, calls.ScaleSetJob{Type: "JobAssigned", JobID: "j1"}),
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Equal(t, int64(0), lt.polls[2].LastMessageID, "the new set's queue starts over")
	require.Equal(t, int64(0), lt.polls[2].AckMessageID, "nothing of the old queue is deleted")
	require.Equal(t, int64(5), lt.polls[3].LastMessageID)
}

func TestALostSessionIsOpenedAgain(t *testing.T) {
	lt := newListenerTest(t, []calls.PollScaleSetOutput{
		message(100, 1),
		{SessionLost: true},
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Equal(t, int64(100), lt.polls[2].LastMessageID, "the cursor stays with a new session of the same set")
	require.True(t, lt.polls[2].AcquireListed, "the new session's statistics show an available job")
	require.Len(t, lt.opens, 2)
	require.Empty(t, lt.opens[0].Stale)
	require.Equal(t, "s1", lt.opens[1].Stale, "the lost session is deleted before another is opened")
}

// A change of the set's capacity (its HRA's maxReplicas, or the HRA applied
// after the listener's first poll) reaches the service on a new poll at once,
// not when the running poll ends (up to PollMaxWait later).
func TestTheCapacityAPollSendsFollowsTheSpec(t *testing.T) {
	lt := newListenerTestWith(t, func(lt *listenerTest, n int) (calls.PollScaleSetOutput, error) {
		if n >= 2 {
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
		}
		return calls.PollScaleSetOutput{}, nil
	})
	lt.pollCall.After(time.Hour)
	spec := listenerSpec()
	spec.MaxRunners, spec.Autoscaler = 0, ""
	grown := spec
	grown.MaxRunners, grown.Autoscaler, grown.Generation = 20, listenerHRA, 2
	lt.env.RegisterDelayedCallback(func() { lt.env.SignalWorkflow(contract.SignalSpec, grown) }, 10*time.Second)
	start := lt.env.Now()
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: spec})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, lt.polls, 2)
	require.Equal(t, 0, lt.polls[0].MaxCapacity, "no HRA yet")
	require.Equal(t, 20, lt.polls[1].MaxCapacity)
	require.Less(t, lt.env.Now().Sub(start), time.Hour+time.Minute, "the second poll began at the change, not when the first ended")
}

func TestAFailedPollIsRetriedOnATimer(t *testing.T) {
	var failedAt []time.Time
	lt := newListenerTestWith(t, func(lt *listenerTest, n int) (calls.PollScaleSetOutput, error) {
		if n <= 3 { // every attempt of the first poll activity
			failedAt = append(failedAt, lt.env.Now())
			return calls.PollScaleSetOutput{}, errors.New("connection refused")
		}
		lt.env.SignalWorkflow(contract.SignalDelete, nil)
		return calls.PollScaleSetOutput{}, nil
	})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, lt.polls, 4, "a poll whose retries are spent is polled again")
	require.Equal(t, lt.polls[0].LastMessageID, lt.polls[3].LastMessageID, "with the same cursor")
	require.GreaterOrEqual(t, lt.env.Now().Sub(failedAt[2]), sessionConflictFirstWait, "after a wait on a timer")
}

func TestAListenerPollsWhileItsPoolIsNotThereYet(t *testing.T) {
	lt := &listenerTest{}
	lt.env = lt.NewTestWorkflowEnvironment()
	lt.env.OnActivity(scaleSets.EnsureScaleSet, mock.Anything, mock.Anything).Return(calls.EnsureScaleSetOutput{ID: 7, RunnerGroupID: 1}, nil)
	lt.env.OnActivity(scaleSets.OpenScaleSetSession, mock.Anything, mock.Anything).Return(calls.OpenScaleSetSessionOutput{SessionID: "s1"}, nil)
	lt.env.OnActivity(scaleSets.CloseScaleSetSession, mock.Anything, mock.Anything).Return(nil)
	lt.mockReports()
	polls := 0
	lt.env.OnActivity(scaleSets.PollScaleSet, mock.Anything, mock.Anything).Return(
		func(context.Context, calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
			polls++
			if polls == 3 {
				lt.env.SignalWorkflow(contract.SignalDelete, nil)
			}
			return message(int64(100+polls), 0), nil
		})
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerHRA, "", contract.SignalScaleSet, mock.Anything).Return(nil)
	tries := 0
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerPool, "", contract.SignalScaleSetID, mock.Anything).Return(
		func(_, _, _, _ string, _ any) error {
			tries++
			if tries < 3 {
				return errors.New("workflow not found")
			}
			return nil
		})
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Equal(t, 3, polls, "the messages did not wait for the pool")
	require.Equal(t, 3, tries, "the pool is told at each step until it takes it")
}

func TestAPollOfASetLeftByARenameIsDropped(t *testing.T) {
	lt := &listenerTest{}
	lt.env = lt.NewTestWorkflowEnvironment()
	var ensured []string
	lt.env.OnActivity(scaleSets.EnsureScaleSet, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.EnsureScaleSetInput) (calls.EnsureScaleSetOutput, error) {
			ensured = append(ensured, in.Name)
			return calls.EnsureScaleSetOutput{ID: int64(6 + len(ensured)), RunnerGroupID: 1}, nil
		})
	lt.env.OnActivity(scaleSets.OpenScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.OpenScaleSetSessionInput) (calls.OpenScaleSetSessionOutput, error) {
			return calls.OpenScaleSetSessionOutput{SessionID: fmt.Sprintf("s%d", in.Set.ID)}, nil
		})
	lt.mockReports()
	lt.env.OnActivity(scaleSets.CloseScaleSetSession, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.CloseScaleSetSessionInput) error {
			lt.closed = append(lt.closed, in.SessionID)
			return nil
		})
	// The first poll (set 7) answers after a minute; the rename comes at 10 s.
	lt.env.OnActivity(scaleSets.PollScaleSet, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
			lt.polls = append(lt.polls, in)
			if in.Set.ID == 7 {
				return message(100, 4, calls.ScaleSetJob{Type: "JobAssigned", JobID: "old"}), nil
			}
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
			return calls.PollScaleSetOutput{}, nil
		}).After(time.Minute)
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerHRA, "", contract.SignalScaleSet, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			lt.sent = append(lt.sent, arg.(contract.ScaleSetMessage))
			return nil
		})
	lt.env.OnSignalExternalWorkflow(mock.Anything, listenerPool, "", contract.SignalScaleSetID, mock.Anything).Return(nil)
	renamed := listenerSpec()
	renamed.Name, renamed.Generation = "arc-linux-2", 2
	lt.env.RegisterDelayedCallback(func() { lt.env.SignalWorkflow(contract.SignalSpec, renamed) }, 10*time.Second)

	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Equal(t, []string{"arc-linux", "arc-linux-2"}, ensured)
	require.Equal(t, []string{"s7", "s8"}, lt.closed, "the old set's session closed at the rename, the new one's at the delete")
	require.Len(t, lt.polls, 2)
	require.Equal(t, int64(8), lt.polls[1].Set.ID)
	require.Equal(t, int64(0), lt.polls[1].LastMessageID, "the new set's queue starts from its beginning")
	require.Equal(t, int64(0), lt.polls[1].AckMessageID, "nothing of the old queue is deleted through the new set")
	for _, m := range lt.sent {
		require.NotEqual(t, 4, m.Assigned, "the old set's message is not the new set's demand")
	}
}

// `arcflow drain` holds a listener: its poll is abandoned, its session closed,
// and nothing is polled until the hold ends; then a new session polls on from
// the same cursor.
func TestAHeldListenerClosesItsSessionAndPollsNothing(t *testing.T) {
	var started []time.Time
	lt := newListenerTestWith(t, func(lt *listenerTest, n int) (calls.PollScaleSetOutput, error) {
		started = append(started, lt.env.Now())
		if n == 3 {
			lt.env.SignalWorkflow(contract.SignalDelete, nil)
		}
		return message(int64(99+n), 1), nil
	})
	lt.pollCall.After(time.Minute)
	lt.env.RegisterDelayedCallback(func() { lt.env.SignalWorkflow(contract.SignalHold, contract.Hold{Held: true}) }, 90*time.Second)
	lt.env.RegisterDelayedCallback(func() {
		lt.mu.Lock()
		defer lt.mu.Unlock()
		require.Len(t, lt.polls, 2, "no poll while held")
		require.Equal(t, []string{"s1"}, lt.closed, "the hold closed the session")
		lt.env.SignalWorkflow(contract.SignalHold, contract.Hold{Held: false})
	}, 2*time.Hour)
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: listenerSpec()})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, lt.polls, 3)
	require.GreaterOrEqual(t, started[2].Sub(started[0]), 2*time.Hour, "the next poll waited for the hold's end")
	require.Equal(t, int64(100), lt.polls[2].LastMessageID, "the cursor kept")
	require.Equal(t, int64(100), lt.polls[2].AckMessageID, "the message the abandoned poll would have deleted is deleted now")
	require.True(t, lt.polls[2].AcquireListed, "a new session")
	require.Equal(t, []string{"s1", "s1"}, lt.closed)
}
