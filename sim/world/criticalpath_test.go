package world

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

func TestMilestoneStepsPairTheKthTimeOfEachStage(t *testing.T) {
	at := func(ms ...int) []time.Time {
		base := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
		var out []time.Time
		for _, m := range ms {
			out = append(out, base.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	m := Milestones{
		Accepted: at(20, 0), // out of order: sorted before pairing
		Decided:  at(50, 50),
		// A stage with fewer times pairs only as many.
		PoolSignalled: at(60),
	}
	steps := m.Steps()
	require.Len(t, steps, 7)
	require.Equal(t, "webhook accepted → autoscaler decided", steps[0].Name)
	require.Equal(t, 2, steps[0].Took.N)
	require.Equal(t, 30*time.Millisecond, steps[0].Took.P50)
	require.Equal(t, 50*time.Millisecond, steps[0].Took.Max)
	require.Equal(t, 1, steps[1].Took.N)
	require.Equal(t, 10*time.Millisecond, steps[1].Took.Max)
	require.Zero(t, steps[2].Took.N, "no runner requested yet")
}

// The pod create starts with the runner's first activity task, or, on
// RunnerRevisionLocal, with the workflow task that runs it as a local activity.
func TestPodCreateStartedFromRecordedRunners(t *testing.T) {
	for file, startedBy := range map[string]enumspb.EventType{
		"runner-ephemeral-job-done.json":       enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
		"runner-local-ephemeral-job-done.json": enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
	} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("..", "..", "workflows", "testdata", "histories", file))
			require.NoError(t, err)
			defer f.Close()
			history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			require.NoError(t, err)
			var want time.Time
			for _, e := range history.GetEvents() {
				if e.GetEventType() == startedBy {
					want = e.GetEventTime().AsTime()
					break
				}
			}
			got, ok := podCreateStarted(history.GetEvents())
			require.True(t, ok)
			require.False(t, want.IsZero())
			require.Equal(t, want, got, "the first %v", startedBy)
		})
	}
}
