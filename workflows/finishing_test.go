package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A completion names its runner; the next scale request passes the name on
// once, even when the counts did not change (a job queued in the same batch).
func TestAutoscalerPassesTheRunnersOfCompletedJobsToItsPool(t *testing.T) {
	at := newAutoscalerTest(t)
	signal := func(after time.Duration, ev contract.JobEvent) {
		at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalJob, ev) }, after)
	}
	signal(time.Second, contract.JobEvent{DeliveryID: "q1", JobID: 1, Action: "queued"})
	signal(2*time.Second, contract.JobEvent{DeliveryID: "q2", JobID: 2, Action: "queued"})
	// Job 1 ends and job 3 queues in one batch: still 2 replicas.
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalJobs, []contract.JobEvent{
			{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-r1"},
			{DeliveryID: "q3", JobID: 3, Action: "queued"},
		})
	}, 60*time.Second)
	signal(120*time.Second, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: "app-r1"}) // redelivered
	at.env.RegisterDelayedCallback(func() {
		var named [][]string
		for i, f := range at.finished {
			if len(f) > 0 {
				named = append(named, f)
				require.Equal(t, 2, at.scales[i].replicas, "the counts did not change")
			}
		}
		require.Equal(t, [][]string{{"app-r1"}}, named, "named once, redelivery or not")
		for _, req := range at.requests {
			require.Equal(t, 10, req.Ceiling, "every request carries maxReplicas as the pool's ceiling")
		}
	}, 130*time.Second)
	at.finish(131*time.Second, hraSpec(0, 10))
}

// The pool of issue 27: a job's completion lowers the desired count while its
// runner's pod is still exiting. Counting that runner, the pool stopped
// another one, here one that registers for a job still queued. Told that the
// runner is finishing, it stops none.
func TestAFinishingRunnerIsNotCapacityAndCausesNoStop(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3})
	})
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 3)
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[0].name})
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[1].name})
		// created[2] still registers: its pod runs, its runner is not listed yet.
	})
	pt.at(time.Minute, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, Finished: []string{pt.created[0].name}})
	})
	pt.at(time.Minute+time.Second, func() {
		require.Empty(t, pt.stopped, "a finishing runner frees the replica; nothing else is stopped")
		require.Len(t, pt.created, 3, "and nothing is created")
		require.Equal(t, 2, pt.status.Replicas, "the finishing runner is not counted")
		pt.done(pt.created[0].name, EndCompleted)
	})
	pt.at(time.Minute+10*time.Second, func() {
		require.Empty(t, pt.stopped)
		require.Len(t, pt.created, 3)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// Without the name the same scale-down stops a runner: the behaviour the
// name prevents, pinned so the test above cannot pass by accident.
func TestWithoutTheNameTheSameScaleDownStopsARunner(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(time.Minute+time.Second, func() { require.Len(t, pt.stopped, 1) })
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// A completion and a queued job in one batch keep the count; the finishing
// runner's replacement starts at once instead of after its pod exits and the
// completion grace.
func TestAFinishingRunnerIsReplacedAtOnceForAQueuedJob(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(time.Minute, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, Finished: []string{pt.created[0].name}})
	})
	// Checked a second later, not a millisecond: on a loaded machine the test
	// clock can reach a callback 1 ms on before the start activity has run.
	pt.at(time.Minute+time.Second, func() {
		require.Len(t, pt.created, 3, "the queued job's runner is created with the scale signal")
		require.Equal(t, time.Minute, pt.created[2].at, "at once, not after a grace")
		pt.done(pt.created[0].name, EndCompleted)
	})
	pt.at(time.Minute+10*time.Second, func() {
		require.Len(t, pt.created, 3, "its exit does not make another")
		require.Empty(t, pt.stopped)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// At maxReplicas the finishing runner's pod still counts: its replacement
// waits for the pod to go, so the pool never runs more pods than the
// autoscaler's ceiling. Below the ceiling it starts at once, as above.
func TestAFinishingRunnerAtTheCeilingIsReplacedOnceItsPodIsGone(t *testing.T) {
	for _, tc := range []struct {
		ceiling int
		atOnce  bool
	}{{ceiling: 2, atOnce: false}, {ceiling: 3, atOnce: true}} {
		t.Run(fmt.Sprintf("ceiling %d", tc.ceiling), func(t *testing.T) {
			pt := newPoolTest(t)
			pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, Ceiling: tc.ceiling}) })
			pt.at(2*time.Second, func() { pt.registerAll() })
			pt.at(time.Minute, func() {
				pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, Ceiling: tc.ceiling, Finished: []string{pt.created[0].name}})
			})
			pt.at(time.Minute+5*time.Second, func() {
				if tc.atOnce {
					require.Len(t, pt.created, 3, "below the ceiling the replacement starts with the scale signal")
				} else {
					require.Len(t, pt.created, 2, "at the ceiling the finishing runner's pod holds its place")
				}
				pt.done(pt.created[0].name, EndCompleted)
			})
			pt.at(time.Minute+10*time.Second, func() {
				require.Len(t, pt.created, 3, "one replacement either way")
				if !tc.atOnce {
					require.Equal(t, time.Minute+5*time.Second, pt.created[2].at, "once the finishing runner was gone")
				}
				require.Empty(t, pt.stopped)
			})
			pt.deleteAndDrain(2 * time.Minute)
			pt.run(spec(0, "h1", true))
		})
	}
}

// A scale-down stops Pending pods first, then idle registered runners, and
// registering runners (pod Running, not listed) only while surplus remains.
func TestScaleDownStopsInTheSafeOrder(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(2*time.Second, func() { pt.registerAll() })
	pt.at(3*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 4}) })
	pt.at(4*time.Second, func() {
		require.Len(t, pt.created, 4)
		pt.phases[pt.created[2].name] = corev1.PodRunning // registering
		pt.phases[pt.created[3].name] = corev1.PodPending
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3})
	})
	pt.at(5*time.Second, func() {
		require.Equal(t, []string{pt.created[3].name}, pt.stopped, "the Pending pod first")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(6*time.Second, func() {
		require.ElementsMatch(t, []string{pt.created[3].name, pt.created[0].name, pt.created[1].name}, pt.stopped,
			"then the idle registered runners; the registering one stays while an idle one can go")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0})
	})
	pt.at(7*time.Second, func() {
		require.ElementsMatch(t, []string{pt.created[3].name, pt.created[1].name, pt.created[0].name, pt.created[2].name}, pt.stopped)
		require.Equal(t, pt.created[2].name, pt.stopped[3], "the registering runner last")
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", true))
}

func TestSafeVictims(t *testing.T) {
	rs := []PoolRunner{
		{Name: "idle-old", Registered: true, Created: t0},
		{Name: "idle-new", Registered: true, Created: t0.Add(time.Minute)},
		{Name: "busy", Registered: true, Created: t0.Add(2 * time.Minute)},
		{Name: "registering", Created: t0.Add(3 * time.Minute)},
		{Name: "pending", Created: t0.Add(4 * time.Minute)},
		{Name: "failed", Created: t0.Add(-time.Hour)},
		{Name: "gone", Created: t0.Add(-2 * time.Hour)},
	}
	phases := map[string]corev1.PodPhase{"registering": corev1.PodRunning, "pending": corev1.PodPending, "failed": corev1.PodFailed}
	require.Equal(t, []string{"pending", "failed", "gone", "idle-new", "idle-old", "registering"},
		safeVictims(rs, busy("busy"), phases, 10), "busy never; no process first, idle next, registering last; newest first in each")
	require.Equal(t, []string{"pending", "failed"}, safeVictims(rs, busy("busy"), phases, 2))
	require.Nil(t, safeVictims(rs, busy(), phases, 0))
}

func TestPlanPoolAsksForPodsOnlyWhenItMustChooseAmongUnregisteredRunners(t *testing.T) {
	registered := runners("r", "h", 3, true)
	v := PoolView{Desired: 2, TemplateHash: "h", Now: t0, Runners: registered, SafeOrder: true}
	require.Equal(t, PoolPlan{NeedBusy: true}, planPool(v), "all registered: busy flags only")

	v.Runners = append(runners("r", "h", 2, true), PoolRunner{Name: "new", TemplateHash: "h", Created: t0.Add(time.Hour)})
	require.Equal(t, PoolPlan{NeedBusy: true, NeedPods: true}, planPool(v))
	v.Busy, v.PodPhases = busy(), map[string]corev1.PodPhase{"new": corev1.PodRunning}
	require.Equal(t, PoolPlan{Stop: []string{"r1"}}, planPool(v), "an idle runner before a registering one")

	v = PoolView{Desired: 2, TemplateHash: "h", Now: t0, SafeOrder: true,
		Runners: append(runners("r", "h", 2, true), PoolRunner{Name: "done", TemplateHash: "h", Registered: true, Finishing: true})}
	require.Equal(t, PoolPlan{}, planPool(v), "a finishing runner is no surplus")
}

// A job that completed failed passes to the pool with its runner, run and
// attempt, once; a successful one does not.
func TestAutoscalerPassesFailedJobsToItsPool(t *testing.T) {
	at := newAutoscalerTest(t)
	signal := func(after time.Duration, ev contract.JobEvent) {
		at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalJob, ev) }, after)
	}
	signal(time.Second, contract.JobEvent{DeliveryID: "q1", JobID: 1, Action: "queued"})
	signal(2*time.Second, contract.JobEvent{DeliveryID: "q2", JobID: 2, Action: "queued"})
	signal(time.Minute, contract.JobEvent{DeliveryID: "c1", JobID: 1, RunID: 100, Action: "completed", RunnerName: "app-r1",
		Repository: "octo-org/app", JobName: "build", RunAttempt: 1, Conclusion: "failure"})
	signal(2*time.Minute, contract.JobEvent{DeliveryID: "c2", JobID: 2, RunID: 200, Action: "completed", RunnerName: "app-r2",
		Repository: "octo-org/app", JobName: "test", RunAttempt: 1, Conclusion: "success"})
	at.env.RegisterDelayedCallback(func() {
		var failed []FailedJob
		for _, req := range at.requests {
			failed = append(failed, req.Failed...)
		}
		require.Equal(t, []FailedJob{{Runner: "app-r1", Repository: "octo-org/app", RunID: 100, JobID: 1, JobName: "build", RunAttempt: 1, Conclusion: "failure"}}, failed)
	}, 3*time.Minute)
	at.finish(4*time.Minute, hraSpec(0, 10))
}
