package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A completion while the count is held sends nothing: its runner's name rides
// on the next request, here the next job's, well within the time the pool
// counts that runner (NamesWithin: the scale-down delay and a grace).
func TestACompletionWhileTheCountIsHeldRidesOnTheNextRequest(t *testing.T) {
	at := newAutoscalerTest(t)
	signal := at.event
	signal(time.Second, contract.JobEvent{DeliveryID: "q1", JobID: 1, Action: "queued"})
	signal(5*time.Second, contract.JobEvent{DeliveryID: "q2", JobID: 2, Action: "queued"})
	signal(10*time.Second, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-r1"})
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 3, "nothing for the completion: the count is held")
		require.Equal(t, 60*time.Second, at.requests[2].NamesWithin)
	}, 12*time.Second)
	signal(15*time.Second, contract.JobEvent{DeliveryID: "q3", JobID: 3, Action: "queued"})
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 4)
		require.Equal(t, []string{"app-r1"}, at.requests[3].Finished, "named with the next job's request")
		require.Equal(t, 2, at.requests[3].Demanded())
	}, 16*time.Second)
	at.finish(17*time.Second, hraSpec(0, 10))
}

// A failed job's completion goes at once: its runner may need a re-run.
func TestAFailedJobsCompletionIsNotHeldBack(t *testing.T) {
	at := newAutoscalerTest(t)
	signal := at.event
	signal(time.Second, contract.JobEvent{DeliveryID: "q1", JobID: 1, Action: "queued"})
	signal(5*time.Second, contract.JobEvent{DeliveryID: "q2", JobID: 2, Action: "queued"})
	signal(10*time.Second, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-r1",
		Conclusion: "failure", JobName: "build", RunID: 9, Repository: "octo/app"})
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 4)
		require.Equal(t, []string{"app-r1"}, at.requests[3].Finished)
		require.Len(t, at.requests[3].Failed, 1)
	}, 11*time.Second)
	at.finish(12*time.Second, hraSpec(0, 10))
}
