package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

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

// A rollout under a count held for the scale-down delay (issue 37): after a
// burst of 100 jobs the autoscaler holds 100 replicas for a demand of 10, and
// ten 60 s jobs run on ten old ephemeral runners when the template changes.
// Each busy old runner serves its job, so the rollout creates nothing until a
// job waits for a runner or an old one leaves with its demand still there;
// before rollout-by-demand the pool rolled toward the held 100 with a surge
// of 50 and created ten new runners at once, which no job needed.
func TestARolloutUnderAHeldCountCreatesOnlyWhatTheDemandNeeds(t *testing.T) {
	pt := newPoolTest(t)
	ended := map[string]bool{}
	live := func() int { return len(pt.created) - len(ended) }
	scale := func(demand int, running, finished []string) {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 100, Demand: &demand, StartsDelivered: true, NamesFinished: true,
			Running: running, Finished: finished, DecidedAt: pt.env.Now(), EffectiveTime: pt.env.Now()})
	}
	end := func(names []string) {
		for _, name := range names {
			ended[name] = true
			pt.done(name, EndCompleted)
		}
	}
	var old []string
	pt.at(0, func() { scale(10, nil, nil) }) // the burst's runners are gone
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 10, "the demand, not the held count")
		pt.registerAll()
		for _, c := range pt.created {
			old = append(old, c.name)
		}
		scale(10, old, nil) // the ten jobs started
	})
	pt.at(2*time.Second, func() {
		next := spec(0, "h2", true)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	for _, at := range []time.Duration{3 * time.Second, 30 * time.Second} {
		pt.at(at, func() {
			require.Len(t, pt.created, 10, "no new runner while the busy old ones serve the demand")
			require.Empty(t, pt.stopped)
		})
	}
	// A job waits: one new runner.
	pt.at(31*time.Second, func() { scale(11, nil, nil) })
	pt.at(32*time.Second, func() {
		require.Len(t, pt.created, 11)
		require.Equal(t, "h2", pt.created[10].hash)
		require.Equal(t, 11, live())
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[10].name})
		scale(11, []string{pt.created[10].name}, nil)
	})
	// Three old jobs complete as three new ones queue: three new runners in
	// their place, beside the old pods that are exiting.
	pt.at(62*time.Second, func() { scale(11, nil, old[:3]) })
	pt.at(62*time.Second+500*time.Millisecond, func() {
		require.Len(t, pt.created, 14)
		require.LessOrEqual(t, live(), 11+6, "demand 11 + surge 6")
	})
	pt.at(63*time.Second, func() { end(old[:3]) })
	// The other seven complete with no job queued: the demand falls to the
	// four new runners, and nothing replaces the old ones.
	pt.at(64*time.Second, func() { scale(4, nil, old[3:]) })
	pt.at(65*time.Second, func() { end(old[3:]) })
	pt.at(70*time.Second, func() {
		require.Len(t, pt.created, 14, "new runners only as the demand needed them")
		require.Len(t, pt.names("h2"), 4)
		require.Len(t, pt.names(""), 4)
		require.Empty(t, pt.stopped)
	})
	pt.deleteAndDrain(71 * time.Second)
	pt.run(spec(0, "h1", true))
}

// A pool that started before rollout-by-demand keeps the older rule for the
// rest of its run, so its recorded history replays.
func TestARolloutUnderAHeldCountInARunFromBeforeRolloutByDemand(t *testing.T) {
	pt := newPoolTest(t)
	pt.env.OnGetVersion(rolloutByDemandVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	demand := 10
	scale := ScaleRequest{Replicas: 100, Demand: &demand, StartsDelivered: true}
	pt.at(0, func() { pt.env.SignalWorkflow(contract.SignalScale, scale) })
	pt.at(time.Second, func() {
		pt.registerAll()
		scale.Running = nil
		for _, c := range pt.created {
			scale.Running = append(scale.Running, c.name)
		}
		pt.env.SignalWorkflow(contract.SignalScale, scale)
	})
	pt.at(2*time.Second, func() {
		next := spec(0, "h2", true)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(3*time.Second, func() { require.Len(t, pt.created, 20, "ten new runners beside the ten busy ones, as before") })
	pt.deleteAndDrain(4 * time.Second)
	pt.run(spec(0, "h1", true))
}

// The same rollout when the template changes before the autoscaler passed the
// ten starts on (it sends them with its next scale request): the pool asks
// GitHub's list once which old runners are busy, creates nothing beside them,
// and keeps the answer, so the plans after it do not ask again.
func TestARolloutAsksGitHubWhenTheStartsAreNotPassedOnYet(t *testing.T) {
	pt := newPoolTest(t)
	demand := 10
	scale := func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 100, Demand: &demand, StartsDelivered: true, NamesFinished: true,
			DecidedAt: pt.env.Now(), EffectiveTime: pt.env.Now()})
	}
	pt.at(0, scale)
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 10)
		pt.registerAll()
		for _, c := range pt.created {
			pt.busy[c.name] = true // their jobs started; no delivery passed on yet
		}
	})
	pt.at(2*time.Second, func() {
		next := spec(0, "h2", true)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(3*time.Second, func() {
		require.Len(t, pt.created, 10, "no new runner beside the busy old ones")
		require.Equal(t, 1, pt.busyCalls, "one read of GitHub's list")
		scale() // another decision, same demand
	})
	pt.at(30*time.Second, func() {
		require.Len(t, pt.created, 10)
		require.Equal(t, 1, pt.busyCalls, "the answer was kept")
		require.Empty(t, pt.stopped)
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", true))
}
