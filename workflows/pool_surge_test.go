package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A rollout of ten busy ephemeral runners under a steady load (issue 25): the
// template changes while every runner runs a 60 s job, so five new runners
// come first (desired 10, surge 5); the old jobs complete as ten new jobs
// queue, so the autoscaler names the old runners finished with the count
// still at 10. Their pods take a moment to exit. Before surge-counts-draining
// the surge ended when the last old runner was finishing, and the pool created
// five more beside them: 20 pods for a limit of 15.
func TestARolloutStaysWithinItsSurgeWhileOldRunnersFinish(t *testing.T) {
	pt := newPoolTest(t)
	ended := map[string]bool{}
	live := func() int { return len(pt.created) - len(ended) }
	peak := 0
	check := func() {
		peak = max(peak, live())
		require.LessOrEqual(t, live(), 15, "desired 10 + surge 5")
	}
	var old []string
	pt.at(0, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 10}) })
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 10)
		pt.registerAll()
		for _, c := range pt.created {
			old = append(old, c.name)
			pt.busy[c.name] = true // each takes a 60 s job
		}
	})
	pt.at(2*time.Second, func() {
		next := spec(0, "h2", true)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(3*time.Second, func() {
		check()
		require.Len(t, pt.created, 15, "five new runners first")
		for _, c := range pt.created[10:] {
			pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: c.name})
		}
	})
	pt.at(4*time.Second, func() {
		check()
		require.Empty(t, pt.stopped, "every old runner is busy")
	})
	// The old jobs complete as ten new ones queue: the count stays at 10.
	pt.at(62*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 10, Finished: old, DecidedAt: pt.env.Now(), EffectiveTime: pt.env.Now()})
	})
	pt.at(62*time.Second+500*time.Millisecond, func() {
		check()
		require.Len(t, pt.created, 15, "no new runner while the finishing old pods still run")
	})
	// Their pods exit; the rest of the new runners follow.
	pt.at(63*time.Second, func() {
		for _, name := range old {
			ended[name] = true
			pt.done(name, EndCompleted)
		}
	})
	pt.at(64*time.Second, func() {
		check()
		require.Len(t, pt.created, 20, "ten new runners in all")
		for _, c := range pt.created[10:] {
			require.Equal(t, "h2", c.hash)
		}
	})
	pt.deleteAndDrain(65 * time.Second)
	pt.run(spec(0, "h1", true))
	require.Equal(t, 15, peak)
}
