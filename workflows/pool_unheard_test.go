package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A runner that ended after its job counts as capacity until the autoscaler
// names it, however late: no runner is created for a job that is done. A new
// job meanwhile gets its runner at once, and a completion the autoscaler never
// hears frees its runner's place after the bound. With the fixed 2 s grace
// before it, the runner was replaced 2 s after it ended.
func TestAnEndedRunnerCountsUntilTheAutoscalerHearsItsCompletion(t *testing.T) {
	pt := newPoolTest(t)
	scale := func(replicas int, finished ...string) {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: replicas, NamesFinished: true, Finished: finished,
			DecidedAt: pt.env.Now(), EffectiveTime: pt.env.Now()})
	}
	var r0, r1 string
	pt.at(time.Second, func() { scale(2) })
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 2)
		r0, r1 = pt.created[0].name, pt.created[1].name
		pt.registerAll()
	})
	pt.at(time.Minute, func() { pt.done(r0, EndCompleted) })
	// The autoscaler decides again before the completion reaches it: it still
	// counts r0's job.
	pt.at(time.Minute+3*time.Second, func() { scale(2) })
	pt.at(time.Minute+10*time.Second, func() {
		require.Len(t, pt.created, 2, "no runner for r0's job, which is done, while the autoscaler lags 10 s")
		require.Len(t, pt.state().Unheard, 1)
		scale(1, r0) // it heard: one job left, on r1
	})
	pt.at(time.Minute+11*time.Second, func() {
		require.Len(t, pt.created, 2, "nothing to replace")
		require.Empty(t, pt.state().Unheard)
		pt.done(r1, EndCompleted)
	})
	// A new job while r1's completion is unheard: its runner is not held back.
	pt.at(time.Minute+12*time.Second, func() { scale(2) })
	pt.at(time.Minute+13*time.Second, func() {
		require.Len(t, pt.created, 3, "the new job's runner, at once")
		require.Equal(t, time.Minute+12*time.Second, pt.created[2].at)
	})
	// r1's completion never reaches the autoscaler (a lost delivery): its
	// place is free after the bound, and the count of 2 is met again.
	pt.at(time.Minute+11*time.Second+unheardCompletionBound-time.Millisecond, func() { require.Len(t, pt.created, 3) })
	pt.at(time.Minute+11*time.Second+unheardCompletionBound+time.Second, func() {
		require.Len(t, pt.created, 4)
		require.Equal(t, time.Minute+11*time.Second+unheardCompletionBound, pt.created[3].at)
		require.Empty(t, pt.state().Unheard)
	})
	pt.deleteAndDrain(3 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// An autoscaler that does not hear its jobs by webhook (metric-driven) never
// names finished runners: its pool keeps the CompletionGrace.
func TestWithoutFinishedRunnersNamedAFinishedRunnerIsReplacedAfterTheGrace(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1}) })
	pt.at(2*time.Second, pt.registerAll)
	pt.at(time.Minute, func() { pt.done(pt.created[0].name, EndCompleted) })
	pt.at(time.Minute+CompletionGrace+time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, time.Minute+CompletionGrace, pt.created[1].at)
		require.Empty(t, pt.state().Unheard)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

func TestPlanCountsUnheardRunnersAsCapacity(t *testing.T) {
	now := time.Unix(1000, 0)
	current := []PoolRunner{{Name: "a", TemplateHash: "h", Registered: true}, {Name: "b", TemplateHash: "h"}}
	v := PoolView{Desired: 5, TemplateHash: "h", Ephemeral: true, Now: now, Runners: current, Unheard: 2, UnheardUntil: now.Add(3 * time.Second)}
	plan := planPool(v)
	require.Equal(t, 1, plan.Create, "5 wanted, 2 live, 2 ended whose jobs the count still holds")
	require.Equal(t, now.Add(3*time.Second), plan.WakeAt, "plan again when the first stops counting")

	v.Desired = 3
	plan = planPool(v)
	require.Zero(t, plan.Create)
	require.Empty(t, plan.Stop, "an unheard runner never makes a live one surplus")

	v.Desired, v.Busy = 1, map[string]bool{}
	plan = planPool(v)
	require.Len(t, plan.Stop, 1, "surplus is counted from the live runners alone")
}

// An autoscaler says it names finished runners from the first request after a
// job queued, long before it hears any start; before any job it does not.
func TestTheAutoscalerSaysItNamesFinishedRunnersFromItsFirstJob(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.RegisterDelayedCallback(func() {
		require.NotEmpty(t, at.requests)
		require.False(t, at.lastRequest().NamesFinished, "minReplicas alone: no job heard")
	}, 500*time.Millisecond)
	at.job(time.Second, "q1", 1, "queued")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 2, at.lastRequest().Replicas)
		require.True(t, at.lastRequest().NamesFinished)
		require.False(t, at.lastRequest().StartsDelivered, "no start heard yet")
	}, 2*time.Second)
	at.finish(3*time.Second, hraSpec(1, 10))
}

// An autoscaler that may hold a completion for its scale-down delay says so
// (NamesWithin): the pool counts the ended runner that long, not a minute.
func TestAnEndedRunnerCountsAsLongAsItsAutoscalerMayTakeToNameIt(t *testing.T) {
	pt := newPoolTest(t)
	within := 5 * time.Minute
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, NamesFinished: true, NamesWithin: within,
			DecidedAt: pt.env.Now(), EffectiveTime: pt.env.Now()})
	})
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 1)
		pt.registerAll()
	})
	pt.at(time.Minute, func() { pt.done(pt.created[0].name, EndCompleted) })
	pt.at(time.Minute+within-time.Second, func() {
		require.Len(t, pt.created, 1, "no runner for the done job while its name may still come")
	})
	pt.at(time.Minute+within+time.Second, func() {
		require.Len(t, pt.created, 2, "after that, the count of 1 is met again")
	})
	pt.deleteAndDrain(10 * time.Minute)
	pt.run(spec(0, "h1", true))
}
