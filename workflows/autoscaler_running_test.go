package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A job's start names its runner; the name waits for the next scale request
// (a start changes no count, so it sends none), which then says that this
// autoscaler hears its jobs start. A redelivery names it once.
func TestAutoscalerPassesTheRunnersOfStartedJobsWithItsNextRequest(t *testing.T) {
	at := newAutoscalerTest(t)
	signal := at.event
	signal(time.Second, contract.JobEvent{DeliveryID: "q1", JobID: 1, Action: "queued"})
	signal(2*time.Second, contract.JobEvent{DeliveryID: "s1", JobID: 1, Action: "in_progress", RunnerName: "app-r1"})
	signal(3*time.Second, contract.JobEvent{DeliveryID: "s1", JobID: 1, Action: "in_progress", RunnerName: "app-r1"}) // redelivered
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 2, "the start sent nothing")
		require.False(t, at.requests[1].StartsDelivered, "no start heard yet when the job queued")
	}, 4*time.Second)
	signal(5*time.Second, contract.JobEvent{DeliveryID: "q2", JobID: 2, Action: "queued"})
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 3)
		last := at.requests[2]
		require.Equal(t, 2, last.Replicas)
		require.Equal(t, []string{"app-r1"}, last.Running, "named once, redelivery or not")
		require.True(t, last.StartsDelivered)
		require.Len(t, at.state().Reservations.Active, 2, "a start reserves nothing and releases nothing")
	}, 6*time.Second)
	signal(7*time.Second, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-r1"})
	at.env.RegisterDelayedCallback(func() {
		require.Len(t, at.requests, 3, "the completion waits for the request that ends the count's hold (deferred-completions)")
	}, 8*time.Second)
	at.env.RegisterDelayedCallback(func() {
		last := at.requests[len(at.requests)-1]
		require.Equal(t, 1, last.Replicas, "the hold ended 30 s after the last scale-out")
		require.Equal(t, []string{"app-r1"}, last.Finished)
		require.Empty(t, last.Running, "sent already")
		require.True(t, last.StartsDelivered, "and still heard")
	}, 36*time.Second)
	at.finish(37*time.Second, hraSpec(0, 10))
}

// event delivers a job event after the given time.
func (at *autoscalerTest) event(after time.Duration, ev contract.JobEvent) {
	at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalJob, ev) }, after)
}

// A job's start goes to the runner it started on, once per delivery that
// names the runner's ID.
func TestAnAutoscalerTellsARunnerItsJobStarted(t *testing.T) {
	at := newAutoscalerTest(t)
	var told []contract.JobStarted
	at.env.OnSignalExternalWorkflow(mock.Anything, "runner/ci/app-x1", "", contract.SignalJobStarted, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			told = append(told, arg.(contract.JobStarted))
			return nil
		})
	at.job(time.Second, "q1", 7, "queued")
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "s1", JobID: 7, Action: "in_progress", RunnerName: "app-x1", RunnerID: 42})
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "s0", JobID: 8, Action: "in_progress", RunnerName: "app-x2"})
	}, 5*time.Second)
	at.finish(time.Minute, hraSpec(0, 10))
	require.Equal(t, []contract.JobStarted{{JobID: 7, RunnerID: 42}}, told, "a start without the runner's ID is not passed on")
}
