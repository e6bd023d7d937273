package workflows

import (
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
}
