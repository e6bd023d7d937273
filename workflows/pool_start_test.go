package workflows

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

func TestStartBatchesKeepEachInputUnderTheLimit(t *testing.T) {
	start := func(id string, inputBytes int) activities.WorkflowStart {
		input, err := json.Marshal(strings.Repeat("x", inputBytes))
		require.NoError(t, err)
		return activities.WorkflowStart{ID: id, Type: "RunnerWorkflow", TaskQueue: "arcflow", Input: input}
	}
	var starts []activities.WorkflowStart
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		starts = append(starts, start(id, 300))
	}
	starts = append(starts, start("huge", 5000), start("f", 300))
	limit := 2*starts[0].Size() + 10

	batches := startBatches(starts, limit)
	var ids []string
	for _, b := range batches {
		size := 0
		for _, s := range b {
			size += s.Size()
			ids = append(ids, s.ID)
		}
		require.True(t, size <= limit || len(b) == 1, "a batch over the limit holds one start alone")
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e", "huge", "f"}, ids, "every start once, in order")
	require.Len(t, batches, 5, "[a b] [c d] [e] [huge] [f]")
	require.Len(t, startBatches(starts[:1], limit), 1)
	require.Empty(t, startBatches(nil, limit))
}

// A decision of many runners starts them in several activities, each input
// under maxStartBatchBytes, and every runner once.
func TestAPoolStartsALargeDecisionInBatches(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 400)
		require.Greater(t, len(pt.starts), 1, "one activity per batch")
		names := map[string]bool{}
		for _, c := range pt.created {
			names[c.name] = true
		}
		require.Len(t, names, 400, "each runner started once")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2})
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(400, "h1", true))
}

// A scale-down that comes while a decision's runners are still starting stops
// them once their start is confirmed, not before: a stop sent before a runner's
// workflow exists is lost, and the runner would start and stay idle for good.
func TestARunnerIsStoppedOnlyOnceItsStartIsConfirmed(t *testing.T) {
	pt := newPoolTest(t)
	pt.startTakes = 5 * time.Second
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3}) })
	pt.at(2*time.Second, func() {
		require.Empty(t, pt.created, "the start is still under way")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0})
	})
	pt.at(3*time.Second, func() {
		require.Empty(t, pt.stopped, "no stop before the start is confirmed")
		for _, r := range pt.state().Runners {
			require.False(t, r.Stopping, "%s is not marked stopping while its stop waits", r.Name)
		}
	})
	pt.at(7*time.Second, func() {
		require.Len(t, pt.created, 3)
		require.Len(t, pt.stopped, 3, "all three stopped once started")
	})
	pt.at(8*time.Second, pt.finishStopped)
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", true))
}

// A pool's starts create its new runners' pods before their workflows
// (runnersCreatedAtStartVersion); a start that fails for good deletes the pod
// it may have made, which no workflow would own, and the runner is dropped.
func TestAPoolsStartsCreateTheirRunnersAndCleanUpAfterAFailedOne(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(time.Minute, func() {
		require.Len(t, pt.created, 2)
		for _, c := range pt.created {
			require.True(t, c.createdFirst, c.name)
			require.Equal(t, RunnerRevisionCreatedByStart, c.revision, c.name)
		}
		require.Empty(t, pt.forced, "started runners keep their pods")
		pt.startErr = temporal.NewNonRetryableApplicationError("namespace is being deleted", "Refused", nil)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3})
	})
	pt.at(2*time.Minute, func() {
		var failed, forced []string
		for _, c := range pt.created[2:] { // the pool tries again, backing off
			failed = append(failed, c.name)
		}
		for _, f := range pt.forced {
			forced = append(forced, f.name)
		}
		require.NotEmpty(t, failed)
		require.Equal(t, failed, forced, "the pods of the runners that never started are deleted")
		for _, name := range failed {
			require.NotContains(t, pt.names(""), name, "and the runners dropped")
		}
		pt.startErr = nil
	})
	pt.deleteAndDrain(3 * time.Minute)
	pt.run(spec(0, "h1", true))
}
