package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

func fakeGitHub(t *testing.T) (*fakegithub.Server, *GitHub, *github.Client) {
	srv, c := fakeGitHubClient(t, fakegithub.Options{}, github.Options{})
	return srv, &GitHub{Registry: c, Jobs: c}, c
}

// fakeGitHubClient is a fake GitHub, closed when the test ends, and the real
// client talking to it.
func fakeGitHubClient(t *testing.T, server fakegithub.Options, client github.Options) (*fakegithub.Server, *github.Client) {
	t.Helper()
	srv, err := fakegithub.New(server)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := github.New(github.Config{Token: "ghp_test", URL: srv.URL}, client)
	require.NoError(t, err)
	return srv, c
}

func TestListQueuedJobsMatchesLabelsLikeARCsMetric(t *testing.T) {
	srv, gh, c := fakeGitHub(t)
	ctx := context.Background()
	queued := srv.QueueJob("octo/app", "build", []string{"self-hosted", "linux"})
	srv.QueueJob("octo/app", "windows", []string{"self-hosted", "windows"})
	srv.QueueJob("octo/app", "case", []string{"self-hosted", "Linux"}) // the metric is case-sensitive
	running := srv.QueueJob("octo/app", "test", []string{"linux"})
	tok, err := c.RegistrationToken(ctx, github.Scope{Repository: "octo/app"})
	require.NoError(t, err)
	_, err = srv.Register(tok.Value(), "r1", []string{"linux"}, true)
	require.NoError(t, err)
	_, err = srv.StartJob(running.ID, "r1")
	require.NoError(t, err)

	out, err := gh.ListQueuedJobs(ctx, QueuedJobsInput{Repositories: []string{"octo/app"}, Labels: []string{"linux"}})
	require.NoError(t, err)
	require.Equal(t, []int64{queued.ID}, out.Queued)
	require.Equal(t, []int64{running.ID}, out.InProgress)

	n, err := gh.SuggestReplicas(ctx, MetricsInput{
		Repositories: []string{"octo/app"}, Labels: []string{"linux"},
		Metrics: []v1alpha1.MetricSpec{{Type: v1alpha1.MetricTotalNumberOfQueuedAndInProgressWorkflowRuns}},
	})
	require.NoError(t, err)
	require.Equal(t, 2, *n, "one queued and one in progress")
}

func TestPercentageRunnersBusy(t *testing.T) {
	srv, gh, c := fakeGitHub(t)
	ctx := context.Background()
	scope := github.Scope{Repository: "octo/app"}
	tok, err := c.RegistrationToken(ctx, scope)
	require.NoError(t, err)
	for _, name := range []string{"app-a", "app-b", "other-c"} {
		_, err := srv.Register(tok.Value(), name, []string{"linux"}, false)
		require.NoError(t, err)
		job := srv.QueueJob("octo/app", "j", []string{"linux"})
		_, err = srv.StartJob(job.ID, name)
		require.NoError(t, err)
	}
	busy := []v1alpha1.MetricSpec{{Type: v1alpha1.MetricPercentageRunnersBusy}}
	n, err := gh.SuggestReplicas(ctx, MetricsInput{Pool: "app", Scope: scope, Metrics: busy, CurrentReplicas: 2})
	require.NoError(t, err)
	require.Equal(t, 3, *n, "2 of 2 busy >= 0.8: ceil(2 * 1.3)")

	n, err = gh.SuggestReplicas(ctx, MetricsInput{Pool: "app", Scope: scope, Metrics: busy, CurrentReplicas: 10})
	require.NoError(t, err)
	require.Equal(t, 7, *n, "2 of 10 busy < 0.3: floor(10 * 0.7)")

	n, err = gh.SuggestReplicas(ctx, MetricsInput{Pool: "app", Scope: scope, Metrics: busy, CurrentReplicas: 0})
	require.NoError(t, err)
	require.Equal(t, 0, *n, "cannot scale from zero, as in ARC")
}
