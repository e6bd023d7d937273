package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities/calls"
)

// Each poll names the set for the worker's arcflow_gha_ metrics and carries
// what its gauges show: minRunners and the statistics recorded last (the
// session's, then each message's).
func TestAPollCarriesWhatTheSetsGaugesShow(t *testing.T) {
	lt := newListenerTest(t, []calls.PollScaleSetOutput{message(100, 3)})
	spec := listenerSpec()
	spec.MinRunners = 1
	lt.env.ExecuteWorkflow(ScaleSetWorkflow, ScaleSetInput{Spec: spec})
	require.NoError(t, lt.env.GetWorkflowError())
	require.Len(t, lt.polls, 2)
	for _, in := range lt.polls {
		require.Equal(t, "arc-linux", in.Name)
		require.Equal(t, "ci", in.Namespace)
		require.Equal(t, 1, in.MinRunners)
	}
	require.Equal(t, calls.ScaleSetStatistics{Assigned: 2, Available: 1}, lt.polls[0].Statistics, "the session's")
	require.Equal(t, calls.ScaleSetStatistics{Assigned: 3}, lt.polls[1].Statistics, "the message's")
}
