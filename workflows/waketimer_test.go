package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A steady load of overlapping jobs wakes the autoscaler on every delivery; its
// timer waits for the oldest reservation's expiry, which each delivery moves no
// earlier, so the timer it has serves the next wait too.
func TestAutoscalerKeepsItsTimerAcrossDeliveries(t *testing.T) {
	at := newAutoscalerTest(t)
	timers := 0
	at.env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
	const jobs = 20
	for i := range jobs {
		queued := time.Duration(i) * 10 * time.Second
		at.job(queued, fmt.Sprintf("q%d", i), int64(i+1), "queued")
		at.job(queued+time.Minute, fmt.Sprintf("c%d", i), int64(i+1), "completed")
	}
	at.finish(10*time.Minute, hraSpec(0, 10))

	// A timer per decision was 39 here; a kept one is 7.
	require.LessOrEqual(t, timers, jobs/2, "timers scheduled for %d deliveries", 2*jobs)
	// The count still falls once the last job completed (250 s) and the last
	// scale-out's delay has passed: 190 s + 30 s.
	require.Equal(t, 0, at.last())
	require.Equal(t, 250*time.Second, at.scales[len(at.scales)-1].at)
}
