package workflows

import (
	"testing"
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
	"github.com/stretchr/testify/require"
)

// batchScript is a webhook burst with everything the reservations book must get
// right: a duplicated delivery, a completion before its queued event, a job
// redelivered under a new delivery ID, and completions of reserved jobs.
var batchScript = []struct {
	at     time.Duration
	events []contract.JobEvent
}{
	{time.Second, []contract.JobEvent{
		{DeliveryID: "d1", JobID: 1, Action: "queued"},
		{DeliveryID: "d2", JobID: 2, Action: "queued"},
		{DeliveryID: "d1", JobID: 1, Action: "queued"},
		{DeliveryID: "d3", JobID: 3, Action: "completed"},
		{DeliveryID: "d4", JobID: 3, Action: "queued"},
		{DeliveryID: "d5", JobID: 4, Action: "queued"},
		{DeliveryID: "d6", JobID: 4, Action: "queued"},
	}},
	{5 * time.Second, []contract.JobEvent{
		{DeliveryID: "d7", JobID: 1, Action: "completed"},
		{DeliveryID: "d8", JobID: 5, Action: "queued"},
		{DeliveryID: "d9", JobID: 5, Action: "completed"},
	}},
}

type batchRun struct {
	scales []scaleSent
	state  AutoscalerState
	book   relativeBook
}

// relativeBook is a reservations book with its times relative to the test's
// start, so two test environments compare.
type relativeBook struct {
	Active           []Reservation
	EarlyCompletions map[int64]time.Duration
	Deliveries       map[string]time.Duration
}

func relativeTo(start time.Time, r Reservations) relativeBook {
	var book relativeBook
	epoch := time.Time{}
	for _, res := range r.Active {
		res.EffectiveTime = epoch.Add(res.EffectiveTime.Sub(start))
		res.ExpirationTime = epoch.Add(res.ExpirationTime.Sub(start))
		book.Active = append(book.Active, res)
	}
	book.EarlyCompletions = map[int64]time.Duration{}
	for id, at := range r.EarlyCompletions {
		book.EarlyCompletions[id] = at.Sub(start)
	}
	book.Deliveries = map[string]time.Duration{}
	for id, at := range r.Deliveries {
		book.Deliveries[id] = at.Sub(start)
	}
	return book
}

// runScript plays batchScript as one `jobs` signal per step (batched) or as one
// `job` signal per event, and reports the scale requests and the final state.
func runScript(t *testing.T, batched bool, window time.Duration) batchRun {
	at := newAutoscalerTest(t)
	for _, step := range batchScript {
		at.env.RegisterDelayedCallback(func() {
			if batched {
				at.env.SignalWorkflow(contract.SignalJobs, step.events)
				return
			}
			for _, ev := range step.events {
				at.env.SignalWorkflow(contract.SignalJob, ev)
			}
		}, step.at)
	}
	var state AutoscalerState
	at.env.RegisterDelayedCallback(func() {
		v, err := at.env.QueryWorkflow(contract.QueryState)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
	}, 10*time.Second)
	spec := hraSpec(0, 10)
	spec.BatchWindow = window
	at.finish(11*time.Second, spec)
	return batchRun{scales: at.scales, state: state, book: relativeTo(at.start, state.Reservations)}
}

func activeJobs(r Reservations) []int64 {
	var ids []int64
	for _, res := range r.Active {
		ids = append(ids, res.JobID)
	}
	return ids
}

func TestAJobsBatchActsLikeItsEventsSignalledOneByOne(t *testing.T) {
	for _, window := range []time.Duration{0, 3 * time.Second} {
		t.Run("batch window "+window.String(), func(t *testing.T) {
			batched := runScript(t, true, window)
			single := runScript(t, false, window)
			require.Equal(t, []int64{2, 4}, activeJobs(batched.state.Reservations), "job 1 completed, job 3 before it was queued, job 5 came and went")
			require.Equal(t, single.book, batched.book)
			require.Empty(t, batched.state.Pending)
			require.Len(t, batched.book.Deliveries, 9, "d1..d9, the duplicated d1 once")
			// One event per signal may cost more scale requests on the way (a
			// decision may run between two signals), never another end.
			require.Equal(t, single.scales[len(single.scales)-1], batched.scales[len(batched.scales)-1])
			require.Equal(t, single.state.Desired, batched.state.Desired)
		})
	}
}

func TestAJobsBatchIsOneDecision(t *testing.T) {
	run := runScript(t, true, 0)
	require.Len(t, run.scales, 3, "one scale request per batch")
	require.Equal(t, []scaleSent{{0, 0}, {3, time.Second}}, run.scales[:2], "the whole first batch at once: jobs 1, 2 and 4")
	require.Equal(t, scaleSent{3, 5 * time.Second}, run.scales[2], "the second batch lowers the demand; the count is held by the scale-down delay")
}

func TestAJobsBatchSurvivesContinueAsNew(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.RegisterDelayedCallback(func() {
		at.env.SetContinueAsNewSuggested(true)
		at.env.SignalWorkflow(contract.SignalJobs, []contract.JobEvent{
			{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d2", JobID: 2, Action: "queued"},
		})
	}, time.Second)
	at.env.ExecuteWorkflow(AutoscalerWorkflow, AutoscalerInput{Spec: hraSpec(0, 10)})
	next := continuedWith[AutoscalerInput](t, at.env)
	require.Equal(t, []int64{1, 2}, activeJobs(next.State.Reservations))
	require.Contains(t, next.State.Reservations.Deliveries, "d2")
}
