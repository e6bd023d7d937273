package fakegithub_test

import (
	"context"
	"net/http"
	"testing"

	gogithub "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// These tests talk to the fake only through go-github, so its shapes stay GitHub's.

func newClient(t *testing.T) (*fakegithub.Server, *gogithub.Client) {
	t.Helper()
	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := gogithub.NewClient(gogithub.WithAuthToken("ghp_test"), gogithub.WithURLs(&srv.URL, &srv.URL))
	require.NoError(t, err)
	return srv, c
}

func TestWorkflowRunsAndJobs(t *testing.T) {
	srv, c := newClient(t)
	ctx := context.Background()
	queued := srv.QueueJob("octo/app", "build", []string{"self-hosted", "linux"})
	running := srv.QueueJob("octo/app", "test", []string{"self-hosted", "linux"})
	tok, _, err := c.Actions.CreateRegistrationToken(ctx, "octo", "app")
	require.NoError(t, err)
	_, err = srv.Register(tok.GetToken(), "r1", []string{"linux"}, true)
	require.NoError(t, err)
	_, err = srv.StartJob(running.ID, "r1")
	require.NoError(t, err)

	runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "app", &gogithub.ListWorkflowRunsOptions{Status: "queued"})
	require.NoError(t, err)
	require.Equal(t, 1, runs.GetTotalCount())
	require.Equal(t, queued.RunID, runs.WorkflowRuns[0].GetID())

	jobs, _, err := c.Actions.ListWorkflowJobs(ctx, "octo", "app", running.RunID, &gogithub.ListWorkflowJobsOptions{})
	require.NoError(t, err)
	require.Len(t, jobs.Jobs, 1)
	job := jobs.Jobs[0]
	require.Equal(t, "in_progress", job.GetStatus())
	require.Equal(t, "r1", job.GetRunnerName())
	require.Equal(t, []string{"self-hosted", "linux"}, job.Labels)

	_, resp, err := c.Actions.ListWorkflowJobs(ctx, "octo", "app", 999999, nil)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestRunnerGroupsVisibleToARepository(t *testing.T) {
	srv, c := newClient(t)
	srv.AddRunnerGroup("octo", fakegithub.RunnerGroup{Name: "Default", Default: true})
	srv.AddRunnerGroup("octo", fakegithub.RunnerGroup{Name: "builders", Visibility: "selected", Repos: []string{"app"}})
	srv.AddRunnerGroup("octo", fakegithub.RunnerGroup{Name: "secret", Visibility: "selected", Repos: []string{"other"}})

	groups, _, err := c.Actions.ListOrganizationRunnerGroups(context.Background(), "octo", &gogithub.ListOrgRunnerGroupOptions{VisibleToRepository: "app"})
	require.NoError(t, err)
	var names []string
	for _, g := range groups.RunnerGroups {
		names = append(names, g.GetName())
	}
	require.Equal(t, []string{"Default", "builders"}, names)
	require.True(t, groups.RunnerGroups[0].GetDefault())
}

func TestGenerateJITConfig(t *testing.T) {
	srv, c := newClient(t)
	cfg, _, err := c.Actions.GenerateOrgJITConfig(context.Background(), "octo", &gogithub.GenerateJITConfigRequest{
		Name: "jit-1", RunnerGroupID: 1, Labels: []string{"linux"},
	})
	require.NoError(t, err)
	require.NotEmpty(t, cfg.GetEncodedJITConfig())
	require.Equal(t, "jit-1", cfg.GetRunner().GetName())
	info, ok := srv.Runner("jit-1")
	require.True(t, ok)
	require.Equal(t, "orgs/octo", info.Scope)

	_, resp, err := c.Actions.GenerateOrgJITConfig(context.Background(), "octo", &gogithub.GenerateJITConfigRequest{Name: "jit-1", RunnerGroupID: 1, Labels: []string{"linux"}})
	require.Error(t, err)
	require.Equal(t, http.StatusConflict, resp.StatusCode, "names are unique per scope")
}

func TestUnauthenticatedCallsAreRefused(t *testing.T) {
	srv, _ := newClient(t)
	anon, err := gogithub.NewClient(gogithub.WithURLs(&srv.URL, &srv.URL))
	require.NoError(t, err)
	_, resp, err := anon.Actions.ListRunners(context.Background(), "octo", "app", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestCallLogCountsEndpoints(t *testing.T) {
	srv, c := newClient(t)
	ctx := context.Background()
	for range 3 {
		_, _, err := c.Enterprise.CreateRegistrationToken(ctx, "acme")
		require.NoError(t, err)
	}
	srv.FailNext(1)
	_, _, err := c.Enterprise.ListRunners(ctx, "acme", nil)
	require.Error(t, err)
	counts := srv.CallCounts()
	require.Equal(t, 3, counts["POST /enterprises/{enterprise}/actions/runners/registration-token"])
	require.Equal(t, 1, counts["fault"])
}
