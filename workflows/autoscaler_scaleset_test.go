package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

func (at *autoscalerTest) scaleSetMessage(after time.Duration, m contract.ScaleSetMessage) {
	at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalScaleSet, m) }, after)
}

// The demand of a scale set is the service's level, never a count of events:
// the same level twice adds nothing, and a lower one lowers the count after
// the scale-down delay.
func TestAScaleSetsLevelIsTheDemand(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalJobStarted, mock.Anything).Return(nil)
	at.scaleSetMessage(time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: 100, Assigned: 3})
	at.scaleSetMessage(2*time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: 101, Assigned: 3, Events: []contract.JobEvent{
		{JobID: contract.ScaleSetJobKey("j1"), Action: "in_progress", RunnerName: "app-a", RunnerID: 9},
	}})
	at.scaleSetMessage(3*time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: 102, Assigned: 1, Events: []contract.JobEvent{
		{JobID: contract.ScaleSetJobKey("j1"), Action: "completed", RunnerName: "app-a", RunnerID: 9, Conclusion: "success"},
	}})
	at.finish(2*time.Minute, hraSpec(1, 10))

	require.Equal(t, 1, at.scales[0].replicas, "min before any message")
	require.Equal(t, 4, at.scales[1].replicas, "min + 3 assigned")
	require.Equal(t, 2, at.last(), "min + 1 once the level fell, after the scale-down delay")
	for _, s := range at.scales {
		require.LessOrEqual(t, s.replicas, 4, "the same level twice adds nothing")
	}
	var finished []string
	for _, f := range at.finished {
		finished = append(finished, f...)
	}
	require.Contains(t, finished, "app-a", "the pool hears which runner finished")
	for _, r := range at.requests[1:] {
		require.True(t, r.NamesFinished, "from the first message on, the pool counts an ended runner until a request names it")
		require.False(t, r.StartsTold, "no auto buffer: the pool still tells runners their pods' readiness")
	}
	require.False(t, at.requests[0].NamesFinished, "before any message nothing speaks for the jobs")
}

// A scale set's failed job goes to the pool to be found by its runner: the
// set's job id is not GitHub's, and it may name no run.
func TestAScaleSetsFailedJobGoesToThePoolByItsRunner(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalJobStarted, mock.Anything).Return(nil)
	queued := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	at.scaleSetMessage(time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: 100, Assigned: 2, Events: []contract.JobEvent{
		{JobID: contract.ScaleSetJobKey("j1"), Action: "in_progress", RunnerName: "app-a", RunnerID: 9, ScaleSetJob: true},
		{JobID: contract.ScaleSetJobKey("j2"), Action: "in_progress", RunnerName: "app-b", RunnerID: 10, ScaleSetJob: true},
	}})
	at.scaleSetMessage(2*time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: 101, Assigned: 0, Events: []contract.JobEvent{
		{JobID: contract.ScaleSetJobKey("j1"), Action: "completed", Repository: "octo/app", RunnerName: "app-a", RunnerID: 9,
			JobName: "test", QueuedAt: queued, Conclusion: "failure", ScaleSetJob: true},
		{JobID: contract.ScaleSetJobKey("j2"), Action: "completed", Repository: "octo/app", RunnerName: "app-b", RunnerID: 10,
			JobName: "lint", Conclusion: "success", ScaleSetJob: true},
	}})
	at.finish(2*time.Minute, hraSpec(0, 10))

	var failed []FailedJob
	for _, r := range at.requests {
		failed = append(failed, r.Failed...)
	}
	require.Equal(t, []FailedJob{{Runner: "app-a", Repository: "octo/app", JobName: "test", RunAttempt: 1, Conclusion: "failure",
		FindByRunner: true, QueuedAt: queued}}, failed, "the failed job alone, with no job id of GitHub's and no run")
}

// A scale set's newly assigned jobs are arrivals for an auto buffer, as
// queued deliveries are: a minute of one a second raises it, while the
// demand stays the service's level.
func TestAScaleSetsAssignedJobsFeedAnAutoBuffer(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalJobStarted, mock.Anything).Return(nil)
	at.warmStatuses()
	at.readyIn10s()
	for i := range 60 {
		at.scaleSetMessage(time.Duration(i+1)*time.Second, contract.ScaleSetMessage{ScaleSetID: 7, MessageID: int64(100 + i), Assigned: 5, Events: []contract.JobEvent{
			{JobID: contract.ScaleSetJobKey(fmt.Sprintf("j%d", i)), Action: "queued", ScaleSetJob: true},
		}})
	}
	at.env.RegisterDelayedCallback(func() {
		s := at.state()
		require.InDelta(t, 1.0, s.Warm.Arrivals.Rate, 0.05)
		require.Equal(t, 14, s.Warm.Runners, "the 90th percentile of Poisson(10)")
		require.Equal(t, 5+14, at.lastRequest().Demanded(), "the set's level, and the buffer")
	}, 60*time.Second+500*time.Millisecond)
	spec := autoSpec(50)
	spec.ScaleSet = "linux-set"
	at.finish(62*time.Second, spec)
}
