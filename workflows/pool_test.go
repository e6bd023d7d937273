package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

const poolID = "pool/ci/runnerdeployment/app"

// poolTest runs a pool workflow with a mocked start activity: the test plays the
// runners by sending runner-registered and runner-done signals.
type poolTest struct {
	testsuite.WorkflowTestSuite
	t       *testing.T
	env     *testsuite.TestWorkflowEnvironment
	start   time.Time
	created []createdRunner
	// starts is the number of runners each StartWorkflows call started.
	starts  []int
	stopped []string
	// adopted are the starts of runners taken over from ARC or the cluster.
	adopted []adoptedStart
	// own are the runners OwnRunners finds in the cluster, and ids the
	// GitHub IDs RunnerIDs reads for them.
	own  []activities.ARCRunner
	ids  map[string]int64
	busy map[string]bool
	// busyCalls counts the RunnerBusy activities: lists of the scope's runners.
	busyCalls int
	// phases are the runners' pod phases; a runner not listed is Running.
	phases map[string]corev1.PodPhase
	status activities.PoolStatus
	// statusWrites counts UpdatePoolStatus calls.
	statusWrites int
	events       []string
	// startTakes is how long each StartWorkflows call takes on the test clock.
	startTakes time.Duration
	// released is when the pool removed its resource's finalizer (zero: not
	// yet), and releasedRef the resource it named.
	released    time.Duration
	releasedRef activities.PoolResourceRef
	// forced are the runners whose pods the pool deleted itself, with when.
	forced []call
	// startErr, when set, is what every StartWorkflows returns.
	startErr error
}

type adoptedStart struct {
	in    RunnerInput
	start activities.WorkflowStart
}

type createdRunner struct {
	name, hash       string
	at               time.Duration
	registrationOnly bool
	volume           *activities.VolumeSlotRef
	// patient: RunnerInput.PatientRegistration; startsTold: RunnerInput.StartsTold.
	patient, startsTold bool
	// poolWakes: RunnerInput.PoolWakes, on revision.
	poolWakes bool
	revision  int
	// createdFirst: its start creates its pod (WorkflowStart.RunnerPod).
	createdFirst bool
}

func newPoolTest(t *testing.T) *poolTest {
	pt := &poolTest{t: t, busy: map[string]bool{}, phases: map[string]corev1.PodPhase{}}
	pt.env = pt.NewTestWorkflowEnvironment()
	pt.env.SetStartWorkflowOptions(startOptions(poolID))
	pt.env.RegisterActivity(&activities.Kubernetes{})
	pt.env.RegisterActivity(&activities.GitHub{})
	pt.env.RegisterActivity(&activities.Workflows{})
	pt.start = pt.env.Now()
	// The runners' starts are recorded; the test plays the runners by signals.
	pt.env.OnActivity(temporalCalls.StartWorkflows, mock.Anything, mock.Anything).Return(
		func(_ context.Context, starts []activities.WorkflowStart) error {
			for _, st := range starts {
				var in RunnerInput
				require.NoError(t, json.Unmarshal(st.Input, &in))
				require.Equal(t, poolID, in.PoolWorkflowID)
				require.Equal(t, contract.RunnerWorkflowID("ci", in.Pod.Name), st.ID)
				require.Equal(t, "RunnerWorkflow", st.Type)
				require.Equal(t, in.Pod.Name, st.Keywords[contract.SearchAttrRunnerName.GetName()])
				if in.Adopted != nil {
					pt.adopted = append(pt.adopted, adoptedStart{in, st})
					continue
				}
				if st.RunnerPod != nil {
					require.Equal(t, in.Pod, *st.RunnerPod, "the pod its runner would create")
					require.False(t, in.Pod.JIT, "a JIT runner creates its own pod")
				}
				pt.created = append(pt.created, createdRunner{in.Pod.Name, in.Pod.TemplateHash, pt.env.Now().Sub(pt.start), in.RegistrationOnly,
					in.Pod.VolumeSlot, in.PatientRegistration, in.StartsTold, in.PoolWakes, in.Revision, st.RunnerPod != nil})
			}
			pt.starts = append(pt.starts, len(starts))
			return pt.startErr
		}).AfterFn(func() time.Duration { return pt.startTakes })
	pt.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalStop, mock.Anything).Return(
		func(_, workflowID, _, _ string, _ any) error {
			pt.stopped = append(pt.stopped, strings.TrimPrefix(workflowID, contract.RunnerWorkflowID("ci", "")))
			return nil
		})
	pt.env.OnActivity(gh.RunnerBusy, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RunnerBusyInput) (map[string]bool, error) {
			pt.busyCalls++
			out := map[string]bool{}
			for _, n := range in.Names {
				if pt.busy[n] {
					out[n] = true
				}
			}
			return out, nil
		})
	pt.env.OnActivity(kube.OwnRunners, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.ARCRunnersInput) ([]activities.ARCRunner, error) { return pt.own, nil })
	pt.env.OnActivity(gh.RunnerIDs, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.RunnerBusyInput) (map[string]int64, error) { return pt.ids, nil })
	pt.env.OnActivity(kube.RunnerPodPhases, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RunnerPodPhasesInput) (map[string]corev1.PodPhase, error) {
			out := map[string]corev1.PodPhase{}
			for _, n := range in.Names {
				if phase, ok := pt.phases[n]; ok {
					out[n] = phase
				} else {
					out[n] = corev1.PodRunning
				}
			}
			return out, nil
		})
	pt.env.OnActivity(kube.ReleasePoolResource, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ref activities.PoolResourceRef) error {
			pt.releasedRef, pt.released = ref, pt.env.Now().Sub(pt.start)
			return nil
		})
	pt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ref activities.PodRef) error {
			pt.forced = append(pt.forced, call{name: ref.Name, at: pt.env.Now().Sub(pt.start)})
			return nil
		})
	pt.env.OnActivity(kube.UpdatePoolStatus, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.PoolStatusInput) error {
			pt.status, pt.statusWrites = in.Status, pt.statusWrites+1
			pt.events = append(pt.events, in.Events...)
			return nil
		})
	return pt
}

// spec is a pool's spec for tests that read its status a second after each
// change; TestAPoolWritesCountsOncePerInterval tests the pacing.
func spec(replicas int, hash string, ephemeral bool) PoolSpec {
	return PoolSpec{
		Namespace: "ci", Kind: "RunnerDeployment", Name: "app", Generation: 1, Replicas: replicas,
		Ephemeral: ephemeral, Scope: registry.Scope{Repository: "octo/app"}, TemplateHash: hash,
		StatusInterval: time.Millisecond,
	}
}

func (pt *poolTest) at(d time.Duration, f func()) { pt.env.RegisterDelayedCallback(f, d) }

// registerAll plays every created, unstopped runner registering with GitHub.
func (pt *poolTest) registerAll() {
	for _, c := range pt.created {
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: c.name})
	}
}

func (pt *poolTest) done(name, reason string) {
	pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: name, Reason: reason})
}

// finishStopped plays every stopped runner ending.
func (pt *poolTest) finishStopped() {
	for _, n := range pt.stopped {
		pt.done(n, EndStopped)
	}
}

func (pt *poolTest) state() PoolState {
	v, err := pt.env.QueryWorkflow(contract.QueryState)
	require.NoError(pt.t, err)
	var s PoolState
	require.NoError(pt.t, v.Get(&s))
	return s
}

func (pt *poolTest) names(hash string) []string {
	var out []string
	for _, r := range pt.state().Runners {
		if hash == "" || r.TemplateHash == hash {
			out = append(out, r.Name)
		}
	}
	return out
}

// deleteAndDrain ends the test: delete, then every stopped runner finishes.
func (pt *poolTest) deleteAndDrain(after time.Duration) {
	pt.at(after, func() { pt.env.SignalWorkflow(contract.SignalDelete, nil) })
	pt.at(after+time.Second, pt.finishStopped)
}

func (pt *poolTest) run(s PoolSpec) {
	pt.env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: s})
	require.True(pt.t, pt.env.IsWorkflowCompleted())
	require.NoError(pt.t, pt.env.GetWorkflowError())
}

func TestPoolScalesUpAndDownWithoutStoppingBusyRunners(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 3)
		pt.registerAll()
	})
	pt.at(2*time.Second, func() {
		require.Equal(t, activities.PoolStatus{Desired: 3, Replicas: 3, Updated: 3, Ready: 3, Available: 3}, pt.status)
		pt.busy[pt.created[2].name] = true // the newest runs a job
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(3*time.Second, func() {
		require.ElementsMatch(t, []string{pt.created[0].name, pt.created[1].name}, pt.stopped, "the busy runner is kept")
		require.Equal(t, 1, pt.status.Replicas)
	})
	pt.deleteAndDrain(4 * time.Second)
	pt.run(spec(3, "h1", false))
	require.Len(t, pt.created, 3, "never more than asked for")
}

func TestPoolScaleDownWaitsForBusyRunners(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.busy[pt.created[0].name], pt.busy[pt.created[1].name] = true, true
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0})
	})
	pt.at(3*time.Second, func() { require.Empty(t, pt.stopped, "both are busy") })
	// One finishes its job; within the retry minute the pool stops it.
	pt.at(30*time.Second, func() { pt.busy[pt.created[0].name] = false })
	pt.at(2*time.Minute, func() { require.Equal(t, []string{pt.created[0].name}, pt.stopped) })
	pt.deleteAndDrain(3 * time.Minute)
	pt.run(spec(2, "h1", false))
}

func TestPoolRollingUpdateKeepsABusyRunnerUntilItsJobEnds(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.busy[pt.created[0].name] = true
		next := spec(2, "h2", true)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(3*time.Second, func() {
		// desired 2, surge 1: one new runner first.
		require.Len(t, pt.created, 3)
		require.Equal(t, "h2", pt.created[2].hash)
		require.Empty(t, pt.stopped, "nothing old goes before a new runner is registered")
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[2].name})
	})
	pt.at(4*time.Second, func() {
		require.Equal(t, []string{pt.created[1].name}, pt.stopped, "the idle old runner goes, the busy one stays")
		pt.done(pt.created[1].name, EndStopped)
	})
	pt.at(5*time.Second, func() {
		require.Len(t, pt.created, 4, "a second new runner replaces the idle old one")
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[3].name})
	})
	// The busy runner's job ends; ephemeral, it exits by itself.
	pt.at(20*time.Minute, func() { pt.done(pt.created[0].name, EndCompleted) })
	pt.at(21*time.Minute, func() {
		require.ElementsMatch(t, []string{pt.created[2].name, pt.created[3].name}, pt.names(""), "all new runners")
		require.NotContains(t, pt.stopped, pt.created[0].name, "the busy runner was never stopped")
		require.Len(t, pt.created, 4)
	})
	pt.deleteAndDrain(22 * time.Minute)
	pt.run(spec(2, "h1", true))
}

func TestFinishedEphemeralRunnerIsReplacedOnlyWhenTheAutoscalerStillWantsIt(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(0, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(time.Second, pt.registerAll)
	pt.at(time.Minute, func() {
		require.Len(t, pt.created, 2)
		pt.done(pt.created[0].name, EndCompleted) // job done, runner gone
	})
	pt.at(time.Minute+time.Second, func() {
		require.Len(t, pt.created, 2, "no replacement while the autoscaler may still count the finished job")
		// The autoscaler hears the completion: one job is left, and it has a runner.
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(2*time.Minute, func() {
		require.Len(t, pt.created, 2, "nothing to replace")
		pt.done(pt.created[1].name, EndCompleted)
	})
	// The autoscaler never speaks (its completed webhook was lost): replaced after the grace.
	pt.at(2*time.Minute+CompletionGrace-time.Millisecond, func() { require.Len(t, pt.created, 2) })
	pt.at(2*time.Minute+CompletionGrace+time.Second, func() {
		require.Len(t, pt.created, 3)
		require.Equal(t, 2*time.Minute+CompletionGrace, pt.created[2].at)
	})
	pt.deleteAndDrain(3 * time.Minute)
	pt.run(spec(0, "h1", true))
}

func TestFinishedRunnerIsReplacedAtOnceWhenTheAutoscalerAlreadySpoke(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(0, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1}) })
	pt.at(time.Second, pt.registerAll)
	pt.at(time.Minute, func() { pt.done(pt.created[0].name, EndCompleted) })
	// A job queued beyond maxReplicas takes the freed slot: the count stays 1.
	pt.at(time.Minute+100*time.Millisecond, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, EffectiveTime: pt.env.Now()})
	})
	pt.at(time.Minute+200*time.Millisecond, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, time.Minute+100*time.Millisecond, pt.created[1].at)
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// The autoscaler decided with only some of the completions heard, and its scale
// arrived after the runners' done signals: the scale still counts a finished
// job, so the pool waits for the next one (or the grace) before replacing.
func TestAScaleDecidedBeforeARunnerFinishedDoesNotReplaceIt(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(0, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(time.Second, pt.registerAll)
	var decided time.Time
	pt.at(time.Minute, func() { decided = pt.env.Now() })
	pt.at(time.Minute+100*time.Millisecond, func() {
		pt.done(pt.created[0].name, EndCompleted)
		pt.done(pt.created[1].name, EndCompleted)
	})
	pt.at(time.Minute+200*time.Millisecond, func() {
		// Decided before the runners finished, with one of the two completions.
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, DecidedAt: decided})
	})
	pt.at(time.Minute+time.Second, func() {
		require.Len(t, pt.created, 2, "no runner for a job that is done")
		// Decided after: nothing is queued.
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0, DecidedAt: pt.env.Now()})
	})
	pt.at(time.Minute+CompletionGrace+time.Second, func() { require.Len(t, pt.created, 2) })
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

func TestPoolScalesToZeroAndBack(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0}) })
	pt.at(3*time.Second, func() {
		require.Len(t, pt.stopped, 2)
		pt.finishStopped()
	})
	pt.at(4*time.Second, func() {
		require.Empty(t, pt.names(""))
		require.Equal(t, 0, pt.status.Replicas)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2})
	})
	pt.at(5*time.Second, func() { require.Len(t, pt.created, 4) })
	pt.deleteAndDrain(6 * time.Second)
	pt.run(spec(2, "h1", false))
}

func TestRegistrationTimeoutsBackOff(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.done(pt.created[0].name, EndRegistrationTimeout) })
	pt.at(5*time.Second, func() { require.Len(t, pt.created, 1, "backing off") })
	pt.at(12*time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, 11*time.Second, pt.created[1].at, "10 s after the first timeout")
		pt.done(pt.created[1].name, EndRegistrationTimeout)
	})
	pt.at(40*time.Second, func() {
		require.Len(t, pt.created, 3)
		require.Equal(t, 32*time.Second, pt.created[2].at, "20 s after the second")
	})
	pt.deleteAndDrain(41 * time.Second)
	pt.run(spec(1, "h1", false))
}

// A runner whose pod fails before it registers (a crashing image), or that no
// node could take, backs off like a registration timeout, and the first runner that registers resets the
// backoff; a registered runner's pod failing later is no start failure. A JIT
// runner, which has a GitHub ID before it starts, counts by NeverStarted.
func TestRunnersThatFailToStartBackOff(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.done(pt.created[0].name, EndPodUnschedulable) })
	pt.at(5*time.Second, func() { require.Len(t, pt.created, 1, "backing off, not looping") })
	pt.at(12*time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, 11*time.Second, pt.created[1].at, "10 s after the first failure")
		// A JIT runner has its ID from its creation; it never started all the same.
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[1].name, Reason: EndPodFailed, RunnerID: 9, NeverStarted: true})
	})
	pt.at(40*time.Second, func() {
		require.Len(t, pt.created, 3)
		require.Equal(t, 32*time.Second, pt.created[2].at, "20 s after the second")
		require.Equal(t, 2, pt.status.FailingRunners, "the status counts the failures in a row")
		require.Equal(t, EndPodFailed, pt.status.LastRunnerFailure)
		require.Equal(t, int64(1), pt.status.RunnerFailures.PodFailed)
		require.Equal(t, int64(1), pt.status.RunnerFailures.PodUnschedulable)
		for _, e := range pt.events {
			require.NotContains(t, e, "RunnerFailed", "no event per failed runner; the watcher's condition says it once")
		}
		pt.registerAll() // the template works again: the backoff resets
	})
	pt.at(41*time.Second, func() {
		// Registered, ran, and its pod failed: replaced at once.
		pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: pt.created[2].name, Reason: EndPodFailed, RunnerID: 7})
	})
	pt.at(42*time.Second, func() {
		require.Len(t, pt.created, 4)
		require.Equal(t, 41*time.Second, pt.created[3].at)
		require.Zero(t, pt.status.FailingRunners, "a registration clears it")
		require.Empty(t, pt.status.LastRunnerFailure)
		require.Equal(t, int64(1), pt.status.RunnerFailures.PodFailed, "the total stays")
	})
	pt.deleteAndDrain(43 * time.Second)
	pt.run(spec(1, "h1", false))
}

func TestDeleteDrainsEveryRunnerThenFinishes(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.busy[pt.created[0].name] = true
		pt.env.SignalWorkflow(contract.SignalDelete, nil)
	})
	pt.at(3*time.Second, func() {
		require.Len(t, pt.stopped, 2, "delete drains busy runners too: they finish their job first")
		require.False(t, pt.env.IsWorkflowCompleted())
		pt.finishStopped()
	})
	pt.run(spec(2, "h1", false))
}

func TestStaleSpecIsIgnored(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		old := spec(5, "h0", false)
		old.Generation = 0 // zero: unknown generation is applied...
		old.Generation = 1 // ...but the same generation again is not
		pt.env.SignalWorkflow(contract.SignalSpec, old)
	})
	pt.at(2*time.Second, func() { require.Len(t, pt.created, 1) })
	pt.deleteAndDrain(3 * time.Second)
	pt.run(spec(1, "h1", false))
}

func TestPoolContinuesAsNewWithItsRunners(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.env.SetContinueAsNewSuggested(true)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2})
	})
	pt.env.ExecuteWorkflow(PoolWorkflow, PoolInput{Spec: spec(2, "h1", false)})
	next := continuedWith[PoolInput](t, pt.env)
	require.Len(t, next.State.Runners, 2)
	for _, r := range next.State.Runners {
		require.True(t, r.Registered)
	}
	require.Equal(t, 2, next.State.Scale.Replicas)
}

func TestRegistrationOnlyRunnerWhileAtZero(t *testing.T) {
	pt := newPoolTest(t)
	s := spec(0, "h1", true)
	s.RegistrationOnly = true
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 1)
		require.True(t, pt.created[0].registrationOnly)
		pt.registerAll()
	})
	pt.at(2*time.Second, func() {
		require.Equal(t, 0, pt.status.Replicas, "the placeholder is not capacity")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2})
	})
	pt.at(3*time.Second, func() {
		require.Len(t, pt.created, 3)
		require.Equal(t, []string{pt.created[0].name}, pt.stopped, "not needed once real runners exist")
		pt.finishStopped()
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[1].name})
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[2].name})
	})
	pt.at(4*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0}) })
	pt.at(5*time.Second, func() {
		require.Len(t, pt.created, 4)
		require.True(t, pt.created[3].registrationOnly, "back at zero: a new placeholder")
	})
	pt.deleteAndDrain(6 * time.Second)
	pt.run(s)
}

func TestADecisionsRunnersStartInOneActivity(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		require.Equal(t, []int{5}, pt.starts, "five runners, one StartWorkflows call")
		pt.registerAll()
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 7})
	})
	pt.at(2*time.Second, func() { require.Equal(t, []int{5, 2}, pt.starts) })
	pt.deleteAndDrain(3 * time.Second)
	pt.run(spec(5, "h1", false))
}
