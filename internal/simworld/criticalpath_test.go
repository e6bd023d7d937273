package simworld

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
