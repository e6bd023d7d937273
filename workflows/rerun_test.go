package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// rerunTest runs a re-run workflow against a scripted GitHub: answers are
// the RerunLostJob outcomes in order, the last one repeated.
type rerunTest struct {
	testsuite.WorkflowTestSuite
	t       *testing.T
	env     *testsuite.TestWorkflowEnvironment
	start   time.Time
	answers []activities.RerunLostJobOutput
	calls   []time.Duration
	asked   []activities.RerunLostJobInput
	reports []activities.LostJobReport
}

func newRerunTest(t *testing.T, answers ...activities.RerunLostJobOutput) *rerunTest {
	rt := &rerunTest{t: t, answers: answers}
	rt.env = rt.NewTestWorkflowEnvironment()
	rt.env.RegisterActivity(&activities.Kubernetes{})
	rt.env.RegisterActivity(&activities.GitHub{})
	rt.start = rt.env.Now()
	rt.env.OnActivity(gh.RerunLostJob, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RerunLostJobInput) (activities.RerunLostJobOutput, error) {
			rt.calls = append(rt.calls, rt.env.Now().Sub(rt.start))
			rt.asked = append(rt.asked, in)
			out := rt.answers[0]
			if len(rt.answers) > 1 {
				rt.answers = rt.answers[1:]
			}
			return out, nil
		})
	rt.env.OnActivity(kube.ReportLostJob, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.LostJobReport) error {
			rt.reports = append(rt.reports, in)
			return nil
		})
	return rt
}

func (rt *rerunTest) lose(after time.Duration, lost JobLost) {
	rt.env.RegisterDelayedCallback(func() { rt.env.SignalWorkflow(contract.SignalJobLost, lost) }, after)
}

func (rt *rerunTest) run() RerunState {
	rt.env.ExecuteWorkflow(RerunWorkflow, RerunInput{Repository: "octo-org/app", RunID: 7, JobName: "build", Watch: time.Hour})
	require.True(rt.t, rt.env.IsWorkflowCompleted())
	require.NoError(rt.t, rt.env.GetWorkflowError())
	var st RerunState
	require.NoError(rt.t, rt.env.GetWorkflowResult(&st))
	return st
}

func outcomes(reports []activities.LostJobReport) []string {
	var out []string
	for _, r := range reports {
		out = append(out, r.Outcome)
	}
	return out
}

var poolRef = activities.PoolResourceRef{Namespace: "ci", Kind: "RunnerDeployment", Name: "app"}

// GitHub takes no re-run while the run goes on: the workflow asks again on
// a doubling timer (15 s, 30 s, 60 s), then re-runs once it completed.
func TestRerunWaitsForTheRunToComplete(t *testing.T) {
	waiting := activities.RerunLostJobOutput{Outcome: activities.RerunWaiting}
	rt := newRerunTest(t, waiting, waiting, waiting, activities.RerunLostJobOutput{Outcome: activities.RerunDone})
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseNodeLost, Limit: 1, Pool: poolRef})
	st := rt.run()
	require.Equal(t, []time.Duration{0, 15 * time.Second, 45 * time.Second, 105 * time.Second}, rt.calls)
	require.Equal(t, activities.RerunLostJobInput{Repository: "octo-org/app", RunID: 7, JobID: 10, RunAttempt: 1}, rt.asked[0])
	require.Equal(t, []string{activities.RerunDone}, outcomes(rt.reports))
	require.Equal(t, activities.CauseNodeLost, rt.reports[0].Cause)
	require.Contains(t, rt.reports[0].Message, "lost with runner app-x (node-lost): re-run (1 of at most 1)")
	require.Equal(t, 1, st.Reruns)
	require.Equal(t, RerunPhaseWatch, st.Phase)
}

// A run that takes a day to complete is waited for, at most MaxPoll apart.
func TestRerunWaitsHoursAtMaxPollApart(t *testing.T) {
	waiting := activities.RerunLostJobOutput{Outcome: activities.RerunWaiting}
	answers := make([]activities.RerunLostJobOutput, 0, 200)
	for range 150 {
		answers = append(answers, waiting)
	}
	rt := newRerunTest(t, append(answers, activities.RerunLostJobOutput{Outcome: activities.RerunDone})...)
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseEvicted, Limit: 1, Pool: poolRef})
	st := rt.run()
	require.Len(t, rt.calls, 151)
	for i := 1; i < len(rt.calls); i++ {
		require.LessOrEqual(t, rt.calls[i]-rt.calls[i-1], DefaultRerunMaxPoll)
	}
	require.Greater(t, rt.calls[150], 20*time.Hour)
	require.Equal(t, 1, st.Reruns)
}

// The re-run job lost again counts against the limit: with a limit of 1 it
// is not re-run twice. A repeat of a loss already heard changes nothing.
func TestRerunLimitHoldsAcrossAttempts(t *testing.T) {
	rt := newRerunTest(t, activities.RerunLostJobOutput{Outcome: activities.RerunDone})
	first := JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseNodeLost, Limit: 1, Pool: poolRef}
	rt.lose(0, first)
	rt.lose(time.Minute, first) // the pool's signal retried
	rt.lose(30*time.Minute, JobLost{JobID: 20, RunAttempt: 2, Runner: "app-y", Cause: activities.CauseOOMKilled, Limit: 1, Pool: poolRef})
	st := rt.run()
	require.Len(t, rt.calls, 1, "one re-run")
	require.Equal(t, []string{activities.RerunDone, activities.RerunLimitReached}, outcomes(rt.reports))
	require.Contains(t, rt.reports[1].Message, "attempt 2, lost with runner app-y (oom-killed): not re-run")
	require.Len(t, st.Lost, 2)
	require.Equal(t, 1, st.Reruns)
}

// With a limit of 2 the second loss is re-run too.
func TestRerunUpToTheLimit(t *testing.T) {
	rt := newRerunTest(t, activities.RerunLostJobOutput{Outcome: activities.RerunDone})
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseNodeLost, Limit: 2, Pool: poolRef})
	rt.lose(30*time.Minute, JobLost{JobID: 20, RunAttempt: 2, Runner: "app-y", Cause: activities.CauseNodeLost, Limit: 2, Pool: poolRef})
	st := rt.run()
	require.Equal(t, []string{activities.RerunDone, activities.RerunDone}, outcomes(rt.reports))
	require.Equal(t, int64(20), rt.asked[1].JobID)
	require.Equal(t, 2, st.Reruns)
}

// Credentials without actions: write: the refusal is reported and the job
// is left as it is; a later loss is refused the same way, not retried forever.
func TestRerunWithoutPermissionIsReported(t *testing.T) {
	rt := newRerunTest(t, activities.RerunLostJobOutput{Outcome: activities.RerunNoPermission, Message: "Resource not accessible by integration"})
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CausePreempted, Limit: 1, Pool: poolRef})
	st := rt.run()
	require.Equal(t, []string{activities.RerunNoPermission}, outcomes(rt.reports))
	require.Contains(t, rt.reports[0].Message, "lack actions: write")
	require.Zero(t, st.Reruns)
}

// The workflow ends once nothing was lost for Watch after its last re-run.
func TestRerunEndsAfterTheWatch(t *testing.T) {
	rt := newRerunTest(t, activities.RerunLostJobOutput{Outcome: activities.RerunDone})
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseNodeLost, Limit: 1, Pool: poolRef})
	rt.run()
	require.Equal(t, time.Hour, rt.env.Now().Sub(rt.start).Round(time.Minute))
}

// A re-run GitHub already has (the worker died after the call went out, or
// a person pressed Re-run) counts against the limit as one of ours.
func TestAReRunAlreadyMadeCountsAgainstTheLimit(t *testing.T) {
	rt := newRerunTest(t, activities.RerunLostJobOutput{Outcome: activities.RerunAlready})
	rt.lose(0, JobLost{JobID: 10, RunAttempt: 1, Runner: "app-x", Cause: activities.CauseNodeLost, Limit: 1, Pool: poolRef})
	rt.lose(30*time.Minute, JobLost{JobID: 20, RunAttempt: 2, Runner: "app-y", Cause: activities.CauseNodeLost, Limit: 1, Pool: poolRef})
	st := rt.run()
	require.Equal(t, []string{activities.RerunAlready, activities.RerunLimitReached}, outcomes(rt.reports))
	require.Equal(t, 1, st.Reruns)
	require.Len(t, rt.calls, 1)
}
