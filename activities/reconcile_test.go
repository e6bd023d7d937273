package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/fake"
)

// The reconcile asks about runs, and only about the jobs of queued runs no
// webhook announced: its cost does not grow with the runs it knows.
func TestReconcileByRunAsksOnlyAboutUnknownRuns(t *testing.T) {
	srv, err := fake.New(fake.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	client, err := github.New(github.Config{Token: "ghp_test", URL: srv.URL}, github.Options{})
	require.NoError(t, err)
	labels := []string{"self-hosted", "linux"}
	var known []int64
	for range 20 {
		known = append(known, srv.QueueJob("octo/app", "announced", labels).RunID)
	}
	missed := srv.QueueJob("octo/app", "missed", labels)
	srv.QueueJob("octo/app", "other-labels", []string{"self-hosted", "windows"})

	g := &GitHub{Jobs: client}
	out, err := g.ListQueuedJobs(context.Background(), QueuedJobsInput{
		Repositories: []string{"octo/app"}, Labels: []string{"linux"}, ByRun: true, KnownRuns: known,
	})
	require.NoError(t, err)
	require.Equal(t, []int64{missed.ID}, out.Queued, "the job no webhook announced, of labels the pool fits")
	require.Equal(t, []int64{missed.RunID}, out.QueuedRuns)
	require.Len(t, out.OpenRuns, 22)
	require.Equal(t, 4, out.Calls, "two run lists and the two unknown runs' jobs, not one call per known run")
	jobCalls := srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runs/{run}/jobs"]
	require.Equal(t, 2, jobCalls)
}
