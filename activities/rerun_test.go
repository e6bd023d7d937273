package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// RerunLostJob against the fake GitHub, through go-github: it waits while the
// run runs, re-runs once it completed, and a second call for the same loss
// (a retry after a lost answer) sees the new attempt and re-runs nothing.
func TestRerunLostJobFollowsGitHubsRules(t *testing.T) {
	srv, gh, c := fakeGitHub(t)
	gh.Reruns = c
	ctx := context.Background()
	lost := srv.QueueJob("octo/app", "build", []string{"linux"})
	other, err := srv.QueueJobInRun(lost.RunID, "test", []string{"linux"})
	require.NoError(t, err)
	for i, job := range []fakegithub.JobInfo{lost, other} {
		start(t, srv, c, job, []string{"r1", "r2"}[i])
	}
	_, err = srv.CompleteJob(lost.ID, "failure") // its runner's node went
	require.NoError(t, err)

	in := RerunLostJobInput{Repository: "octo/app", RunID: lost.RunID, JobID: lost.ID, RunAttempt: 1}
	out, err := gh.RerunLostJob(ctx, in)
	require.NoError(t, err)
	require.Equal(t, RerunLostJobOutput{Outcome: RerunWaiting}, out, "the run's other job still runs")

	_, err = srv.CompleteJob(other.ID, "success")
	require.NoError(t, err)
	calls := srv.CallCounts()
	out, err = gh.RerunLostJob(ctx, in)
	require.NoError(t, err)
	require.Equal(t, RerunLostJobOutput{Outcome: RerunDone}, out)
	require.Len(t, srv.Reruns(), 1)
	require.Equal(t, 2, totalCalls(srv.CallCounts())-totalCalls(calls), "a read of the run and the re-run")

	out, err = gh.RerunLostJob(ctx, in)
	require.NoError(t, err)
	require.Equal(t, RerunLostJobOutput{Outcome: RerunAlready}, out)
	require.Len(t, srv.Reruns(), 1, "never twice")
}

func TestRerunLostJobWithoutActionsWrite(t *testing.T) {
	srv, gh, c := fakeGitHub(t)
	gh.Reruns = c
	srv.SetActionsWrite(false)
	job := srv.QueueJob("octo/app", "build", []string{"linux"})
	start(t, srv, c, job, "r1")
	_, err := srv.CompleteJob(job.ID, "failure")
	require.NoError(t, err)
	out, err := gh.RerunLostJob(context.Background(), RerunLostJobInput{Repository: "octo/app", RunID: job.RunID, JobID: job.ID, RunAttempt: 1})
	require.NoError(t, err)
	require.Equal(t, RerunNoPermission, out.Outcome)
	require.Equal(t, "Resource not accessible by integration", out.Message)
	require.Empty(t, srv.Reruns())
}

// start registers a runner for the job's repository and hands it the job.
func start(t *testing.T, srv *fakegithub.Server, c *github.Client, job fakegithub.JobInfo, runner string) {
	t.Helper()
	tok, err := c.RegistrationToken(context.Background(), github.Scope{Repository: job.Repo})
	require.NoError(t, err)
	_, err = srv.Register(tok.Value(), runner, []string{"linux"}, true)
	require.NoError(t, err)
	_, err = srv.StartJob(job.ID, runner)
	require.NoError(t, err)
}

func totalCalls(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
