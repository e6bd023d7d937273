package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// passedOn records the job events another autoscaler received, or refuses them
// as a workflow that is not running would.
func (at *autoscalerTest) passedOn(id string, refuse bool) *[]contract.JobEvent {
	var got []contract.JobEvent
	at.env.OnSignalExternalWorkflow(mock.Anything, id, "", mock.Anything, mock.Anything).Return(
		func(_, _, _, name string, arg any) error {
			if refuse {
				return errors.New("workflow not found")
			}
			switch name {
			case contract.SignalJob:
				got = append(got, arg.(contract.JobEvent))
			case contract.SignalJobs:
				got = append(got, arg.([]contract.JobEvent)...)
			}
			return nil
		})
	return &got
}

func (at *autoscalerTest) queuedWithOverflow(at0 time.Duration, delivery string, id int64, overflow ...string) {
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: delivery, JobID: id, Action: "queued", Overflow: overflow})
	}, at0)
}

func jobIDsOf(events []contract.JobEvent) (out []string) {
	for _, ev := range events {
		out = append(out, ev.Action+":"+string(rune('0'+ev.JobID)))
	}
	return out
}

// A pool at maxReplicas passes the next job to the next matching autoscaler,
// with the rest of the overflow; the job's completion follows it there; once the
// pool has room again, jobs stay here.
func TestAJobBeyondMaxSpillsToTheNextAutoscalerAndItsCompletionFollows(t *testing.T) {
	at := newAutoscalerTest(t)
	b := at.passedOn("hra/ci/b", false)
	at.queuedWithOverflow(time.Second, "q1", 1, "hra/ci/b", "hra/ci/c")
	at.queuedWithOverflow(2*time.Second, "q2", 2, "hra/ci/b", "hra/ci/c")
	at.queuedWithOverflow(3*time.Second, "q3", 3, "hra/ci/b", "hra/ci/c") // at max 2: spills
	at.queuedWithOverflow(4*time.Second, "q3", 3, "hra/ci/b", "hra/ci/c") // a redelivery: nothing
	at.job(5*time.Second, "c3", 3, "completed")
	at.job(6*time.Second, "c1", 1, "completed")
	at.queuedWithOverflow(7*time.Second, "q4", 4, "hra/ci/b") // room again: stays here
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"queued:3", "completed:3"}, jobIDsOf(*b))
		require.Equal(t, []string{"hra/ci/c"}, (*b)[0].Overflow, "b may pass it on to c")
		require.Empty(t, (*b)[1].Overflow)
		require.Equal(t, "c3", (*b)[1].DeliveryID, "the completion's own delivery, for b's dedup")
		require.Equal(t, 2, at.last(), "jobs 2 and 4 here; job 3 never counted")
		for _, n := range replicasOf(at.scales) {
			require.LessOrEqual(t, n, 2, "never beyond max")
		}
	}, 10*time.Second)
	spec := hraSpec(0, 2)
	at.finish(11*time.Second, spec)
}

// A job whose next autoscaler is gone tries the one after it; with none left it
// waits here, as in ARC, behind the full pool.
func TestASpilledJobWhoseAutoscalersAreGoneStaysHere(t *testing.T) {
	at := newAutoscalerTest(t)
	at.passedOn("hra/ci/b", true)
	c := at.passedOn("hra/ci/c", false)
	at.queuedWithOverflow(time.Second, "q1", 1, "hra/ci/b", "hra/ci/c")
	at.queuedWithOverflow(2*time.Second, "q2", 2, "hra/ci/b", "hra/ci/c") // b refuses: c takes it
	at.queuedWithOverflow(3*time.Second, "q3", 3, "hra/ci/b")             // b refuses, none left: here
	at.job(4*time.Second, "c2", 2, "completed")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"queued:2", "completed:2"}, jobIDsOf(*c), "the completion goes where the job went")
		require.Empty(t, (*c)[0].Overflow)
	}, 5*time.Second)
	spec := hraSpec(0, 1)
	spec.TriggerDuration = 10 * time.Minute
	at.job(9*time.Minute, "c1", 1, "completed")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.last(), "job 3 waited here beyond max and got job 1's slot")
	}, 15*time.Minute)
	at.finish(16*time.Minute, spec)
}

// Passed-on jobs are remembered across continue-as-new, so a completion after
// it still follows its job.
func TestSpilledJobsCarryOverContinueAsNew(t *testing.T) {
	at := newAutoscalerTest(t)
	at.passedOn("hra/ci/b", false)
	at.queuedWithOverflow(time.Second, "q1", 1, "hra/ci/b")
	at.queuedWithOverflow(2*time.Second, "q2", 2, "hra/ci/b")
	at.env.RegisterDelayedCallback(func() {
		at.env.SetContinueAsNewSuggested(true)
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "q3", JobID: 3, Action: "queued"})
	}, 10*time.Second)
	at.env.ExecuteWorkflow(AutoscalerWorkflow, AutoscalerInput{Spec: hraSpec(0, 1)})
	next := continuedWith[AutoscalerInput](t, at.env)
	require.Contains(t, next.State.Spilled, int64(2))
	require.Equal(t, "hra/ci/b", next.State.Spilled[2].To)
	require.Empty(t, next.State.Outbox, "sent before continuing")
}
