package github_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
)

// A scale set's job is found by the runner that ran it: in its run when the
// set named it, else among the runs made before it was queued, newest first,
// without listing the jobs of runs made after it.
func TestFindRunnerJobByRunnerName(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()
	scope := github.Scope{Repository: "octo/app"}
	for _, name := range []string{"runner-a", "runner-b", "runner-idle"} {
		register(t, srv, c, scope, name, true)
	}
	older := srv.QueueJob("octo/app", "build", []string{"linux"})
	clk.Advance(time.Minute)
	lost := srv.QueueJob("octo/app", "test", []string{"linux"})
	clk.Advance(time.Minute)
	newer := srv.QueueJob("octo/app", "lint", []string{"linux"})
	for job, runner := range map[int64]string{older.ID: "runner-b", lost.ID: "runner-a"} {
		_, err := srv.StartJob(job, runner)
		require.NoError(t, err)
	}
	_, err := srv.CompleteJob(lost.ID, "failure")
	require.NoError(t, err)

	job, found, err := c.FindRunnerJob(ctx, "octo/app", lost.RunID, "runner-a", time.Time{})
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, github.RunnerJob{RunID: lost.RunID, JobID: lost.ID, Name: "test", RunAttempt: 1}, job)

	before := srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runs/{run}/jobs"]
	job, found, err = c.FindRunnerJob(ctx, "octo/app", 0, "runner-a", lost.CreatedAt)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, lost.ID, job.JobID)
	require.Equal(t, lost.RunID, job.RunID)
	require.Equal(t, 1, srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runs/{run}/jobs"]-before,
		"the newer run (%d) is skipped: only the lost job's run is listed", newer.RunID)

	_, found, err = c.FindRunnerJob(ctx, "octo/app", 0, "runner-idle", time.Time{})
	require.NoError(t, err)
	require.False(t, found, "a runner that ran no job")
	_, found, err = c.FindRunnerJob(ctx, "octo/app", older.RunID, "runner-a", time.Time{})
	require.NoError(t, err)
	require.False(t, found, "not in that run")
	_, _, err = c.FindRunnerJob(ctx, "octo", 0, "runner-a", time.Time{})
	require.ErrorContains(t, err, "must be owner/name")
}
