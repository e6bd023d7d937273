package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
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

// wakesWorkflow waits for a wake 30 s away while one 10 minutes away is
// pending, then for the 10 minutes one: a pool's status write before its
// registration check.
func wakesWorkflow(ctx workflow.Context) error {
	var t wakeTimer
	start := workflow.Now(ctx)
	t.arm(ctx, start.Add(10*time.Minute))
	if err := t.arm(ctx, start.Add(30*time.Second)).Get(ctx, nil); err != nil {
		return err
	}
	return t.arm(ctx, start.Add(10*time.Minute)).Get(ctx, nil)
}

// An earlier wake no longer cancels a later one that the waits after it need
// again: two timers where there were three.
func TestAnEarlierWakeKeepsTheLaterTimer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version workflow.Version
		timers  int
	}{{"kept", 1, 2}, {"before keptLaterWakesVersion", workflow.DefaultVersion, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.OnGetVersion(keptLaterWakesVersion, workflow.DefaultVersion, 1).Return(tc.version)
			var timers []time.Duration
			env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { timers = append(timers, d) })
			env.ExecuteWorkflow(wakesWorkflow)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, timers, tc.timers, "timers started: %v", timers)
		})
	}
}
