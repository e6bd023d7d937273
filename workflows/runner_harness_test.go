package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

// runnerTest drives a runner workflow in the SDK's test environment, where timers
// skip ahead. It records the order of activity calls and their (test) times.
type runnerTest struct {
	testsuite.WorkflowTestSuite
	t        *testing.T
	revision int
	env      *testsuite.TestWorkflowEnvironment
	calls    []call
	start    time.Time
}

type call struct {
	name string
	at   time.Duration // since the workflow started
}

// runnerRevisions are the code paths every runner test runs on: runs started
// on an earlier revision keep theirs, and pools start theirs on the latest.
var runnerRevisions = []int{RunnerRevisionActivities, RunnerRevisionLocal, RunnerRevisionRegisteringAtStart, RunnerRevisionQuietEnd, RunnerRevisionReadyUntold,
	RunnerRevisionLatest}

// afterTimeoutDelete is a runner's last calls once its registration timed
// out: the pod's delete and a look for a late registration, and from
// RunnerRevisionRecheckAfterPodGone another look once the pod is gone (here,
// with no pod signal, once the wait for it ends).
func afterTimeoutDelete(revision int) []string {
	if revision >= RunnerRevisionRecheckAfterPodGone {
		return []string{"DeleteRunnerPod", "FindRunner", "FindRunner"}
	}
	return []string{"DeleteRunnerPod", "FindRunner"}
}

func forEachRevision(t *testing.T, test func(t *testing.T, revision int)) {
	for _, revision := range runnerRevisions {
		t.Run(fmt.Sprintf("revision-%d", revision), func(t *testing.T) { test(t, revision) })
	}
}

func newRunnerTest(t *testing.T, revision int) *runnerTest {
	rt := &runnerTest{t: t, revision: revision}
	rt.env = rt.NewTestWorkflowEnvironment()
	rt.env.RegisterActivity(&activities.Kubernetes{})
	rt.env.RegisterActivity(&activities.GitHub{})
	rt.env.RegisterActivity(&activities.Workflows{})
	rt.start = rt.env.Now()
	return rt
}

func (rt *runnerTest) record(name string) {
	rt.calls = append(rt.calls, call{name: name, at: rt.env.Now().Sub(rt.start)})
}

func (rt *runnerTest) names() []string {
	var out []string
	for _, c := range rt.calls {
		out = append(out, c.name)
	}
	return out
}

func (rt *runnerTest) count(name string) int {
	n := 0
	for _, c := range rt.calls {
		if c.name == name {
			n++
		}
	}
	return n
}

// mockPod makes EnsureRunnerPod and DeleteRunnerPod succeed.
func (rt *runnerTest) mockPod() {
	rt.mockPodCreated(activities.RunnerPodOutput{UID: "uid-1", Created: true, PoolToken: true})
}

// mockPodCreated makes EnsureRunnerPod return out and DeleteRunnerPod succeed.
func (rt *runnerTest) mockPodCreated(out activities.RunnerPodOutput) {
	rt.env.OnActivity(kube.EnsureRunnerPod, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RunnerPodInput) (activities.RunnerPodOutput, error) {
			require.Equal(rt.t, out.RunnerID != 0, in.JIT, "only a JIT runner is registered by its creation")
			rt.record("EnsureRunnerPod")
			return out, nil
		})
	rt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ref activities.PodRef) error {
			require.Equal(rt.t, "uid-1", ref.UID, "deletes only its own pod")
			if rt.count("EnsureRunnerPod") > 0 { // not a runner adopted or carried over by continue-as-new
				require.Equal(rt.t, out.PoolToken, ref.PoolToken, "deletes a Secret of the runner's own only when its pod read one")
			}
			rt.record("DeleteRunnerPod")
			return nil
		})
}

// mockFind answers FindRunner: registered from the given delay on (negative: never).
func (rt *runnerTest) mockFind(registeredAfter time.Duration) {
	rt.env.OnActivity(gh.FindRunner, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.FindRunnerInput) (activities.FindRunnerOutput, error) {
			rt.record("FindRunner")
			if registeredAfter >= 0 && rt.env.Now().Sub(rt.start) >= registeredAfter {
				return activities.FindRunnerOutput{Found: true, ID: 42, Online: true}, nil
			}
			return activities.FindRunnerOutput{}, nil
		})
}

// mockRemove answers RemoveRunner with the given errors in turn, then success.
func (rt *runnerTest) mockRemove(errs ...error) {
	rt.env.OnActivity(gh.RemoveRunner, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RemoveRunnerInput) (activities.RemoveRunnerOutput, error) {
			require.Equal(rt.t, int64(42), in.ID)
			rt.record("RemoveRunner")
			if len(errs) > 0 {
				err := errs[0]
				errs = errs[1:]
				return activities.RemoveRunnerOutput{}, err
			}
			return activities.RemoveRunnerOutput{}, nil
		})
}

// recordPublished records each runner state the runner upserts, in order.
func (rt *runnerTest) recordPublished() *[]string {
	var published []string
	rt.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		state, _ := args.Get(0).(temporal.SearchAttributes).GetKeyword(contract.SearchAttrRunnerState)
		published = append(published, state)
	}).Return(nil)
	return &published
}

func (rt *runnerTest) after(d time.Duration, f func()) { rt.env.RegisterDelayedCallback(f, d) }

// state is the runner's state query's answer.
func (rt *runnerTest) state() RunnerState {
	rt.t.Helper()
	v, err := rt.env.QueryWorkflow(contract.QueryState)
	require.NoError(rt.t, err)
	var state RunnerState
	require.NoError(rt.t, v.Get(&state))
	return state
}

func (rt *runnerTest) signalPod(phase string, ready bool, rv string) {
	rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{
		UID: "uid-1", ResourceVersion: rv, Exists: true, Phase: corePhase(phase), Ready: ready,
		ReadySince: rt.env.Now(),
	})
}

func (rt *runnerTest) signalPodDeleted() {
	rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{UID: "uid-1", ResourceVersion: "deleted"})
}

func (rt *runnerTest) run(ephemeral bool, timings RunnerTimings) RunnerDone {
	return rt.runInput(rt.input(ephemeral, timings))
}

// runInput runs the runner with in to its end and returns its result.
func (rt *runnerTest) runInput(in RunnerInput) RunnerDone {
	rt.env.ExecuteWorkflow(RunnerWorkflow, in)
	require.True(rt.t, rt.env.IsWorkflowCompleted())
	require.NoError(rt.t, rt.env.GetWorkflowError())
	var done RunnerDone
	require.NoError(rt.t, rt.env.GetWorkflowResult(&done))
	return done
}

func (rt *runnerTest) input(ephemeral bool, timings RunnerTimings) RunnerInput {
	in := runnerInput(ephemeral, timings)
	in.Revision = rt.revision
	return in
}

// onPoolSignal answers the runner's signals to its pool, whichever way its
// revision sends them.
func (rt *runnerTest) onPoolSignal(pool string, got func(name string, arg []byte)) {
	if rt.revision >= RunnerRevisionLocal {
		rt.env.OnActivity(temporalCalls.SignalWorkflow, mock.Anything, mock.Anything).Return(
			func(_ context.Context, s activities.WorkflowSignal) error {
				require.Equal(rt.t, pool, s.WorkflowID)
				got(s.Name, s.Arg)
				return nil
			})
		// A grouped end carries one RunnerDone, which the worker may group.
		rt.env.OnActivity(temporalCalls.SignalWorkflowGrouped, mock.Anything, mock.Anything).Return(
			func(_ context.Context, s activities.GroupedSignal) error {
				require.Equal(rt.t, pool, s.WorkflowID)
				require.Equal(rt.t, contract.SignalRunnersDone, s.GroupName)
				got(s.Name, s.Arg)
				return nil
			})
		return
	}
	rt.env.OnSignalExternalWorkflow(mock.Anything, pool, "", mock.Anything, mock.Anything).Return(
		func(_, _, _ string, name string, arg any) error {
			encoded, err := json.Marshal(arg)
			require.NoError(rt.t, err)
			got(name, encoded)
			return nil
		})
}

func runnerInput(ephemeral bool, timings RunnerTimings) RunnerInput {
	spec := v1alpha1.RunnerSpec{RunnerConfig: v1alpha1.RunnerConfig{Repository: "octo/app", Ephemeral: &ephemeral}}
	return RunnerInput{
		Pod:       activities.RunnerPodInput{Namespace: "ci", Name: "app-runner-x1", Pool: "app", Spec: spec},
		Scope:     registry.Scope{Repository: "octo/app"},
		Ephemeral: ephemeral,
		Timings:   timings,
	}
}

func busyErr() error {
	return temporal.NewNonRetryableApplicationError("runner busy", activities.ErrTypeRunnerBusy, nil)
}

func rateLimitErr(reset time.Time) error {
	return temporal.NewNonRetryableApplicationError("rate limited", activities.ErrTypeRateLimited, nil, activities.RateLimitDetails{Reset: reset})
}
