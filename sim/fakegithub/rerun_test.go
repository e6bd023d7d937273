package fakegithub_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// clock is a fake's clock a test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newRerunWorld is a fake on a hand-moved clock with one idle, non-ephemeral
// runner "r1" of octo/app, and a log of job events.
func newRerunWorld(t *testing.T) (*fakegithub.Server, *gogithub.Client, *clock, func() []fakegithub.JobEvent) {
	t.Helper()
	clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	srv, err := fakegithub.New(fakegithub.Options{Now: clk.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := gogithub.NewClient(gogithub.WithAuthToken("ghp_test"), gogithub.WithURLs(&srv.URL, &srv.URL))
	require.NoError(t, err)
	var mu sync.Mutex
	var events []fakegithub.JobEvent
	srv.OnJobEvent(func(e fakegithub.JobEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	})
	tok, _, err := c.Actions.CreateRegistrationToken(context.Background(), "octo", "app")
	require.NoError(t, err)
	_, err = srv.Register(tok.GetToken(), "r1", nil, false)
	require.NoError(t, err)
	return srv, c, clk, func() []fakegithub.JobEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]fakegithub.JobEvent(nil), events...)
	}
}

// runJob runs a queued job on r1 to its conclusion.
func runJob(t *testing.T, srv *fakegithub.Server, jobID int64, conclusion string) {
	t.Helper()
	_, err := srv.StartJob(jobID, "r1")
	require.NoError(t, err)
	_, err = srv.CompleteJob(jobID, conclusion)
	require.NoError(t, err)
}

// requireRefused asserts GitHub's 403 with message.
func requireRefused(t *testing.T, resp *gogithub.Response, err error, message string) {
	t.Helper()
	var ghErr *gogithub.ErrorResponse
	require.True(t, errors.As(err, &ghErr), "%v", err)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, message, ghErr.Message)
}

func TestRerunWaitsForTheRunThenStartsANewAttempt(t *testing.T) {
	srv, c, _, events := newRerunWorld(t)
	ctx := context.Background()
	lost := srv.QueueJob("octo/app", "build", []string{"self-hosted"})
	other, err := srv.QueueJobInRun(lost.RunID, "lint", []string{"self-hosted"})
	require.NoError(t, err)
	require.Equal(t, 1, other.RunAttempt)
	runJob(t, srv, lost.ID, "failure")

	run, _, err := c.Actions.GetWorkflowRunByID(ctx, "octo", "app", lost.RunID)
	require.NoError(t, err)
	require.Equal(t, "in_progress", run.GetStatus(), "lint is still queued")
	require.Equal(t, 1, run.GetRunAttempt())
	resp, err := c.Actions.RerunJobByID(ctx, "octo", "app", lost.ID)
	requireRefused(t, resp, err, "The workflow run containing this job is already running")

	runJob(t, srv, other.ID, "success")
	run, _, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "app", lost.RunID)
	require.NoError(t, err)
	require.Equal(t, "completed", run.GetStatus())
	require.Equal(t, "failure", run.GetConclusion(), "one job of the attempt failed")

	resp, err = c.Actions.RerunJobByID(ctx, "octo", "app", lost.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	run, _, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "app", lost.RunID)
	require.NoError(t, err)
	require.Equal(t, 2, run.GetRunAttempt())
	require.Equal(t, "queued", run.GetStatus())
	require.Empty(t, run.GetConclusion())

	reruns := srv.Reruns()
	require.Len(t, reruns, 1)
	require.Equal(t, lost.ID, reruns[0].JobID)
	require.Equal(t, 2, reruns[0].Attempt)
	again := reruns[0].NewJobID
	require.NotEqual(t, lost.ID, again)

	latest, _, err := c.Actions.ListWorkflowJobs(ctx, "octo", "app", lost.RunID, nil)
	require.NoError(t, err)
	require.Len(t, latest.Jobs, 2, "the latest attempt: lint copied over, build again")
	require.Equal(t, other.ID, latest.Jobs[0].GetID())
	require.Equal(t, int64(1), latest.Jobs[0].GetRunAttempt())
	require.Equal(t, again, latest.Jobs[1].GetID())
	require.Equal(t, int64(2), latest.Jobs[1].GetRunAttempt())
	require.Equal(t, "queued", latest.Jobs[1].GetStatus())
	require.Equal(t, "build", latest.Jobs[1].GetName())
	all, _, err := c.Actions.ListWorkflowJobs(ctx, "octo", "app", lost.RunID, &gogithub.ListWorkflowJobsOptions{Filter: "all"})
	require.NoError(t, err)
	require.Len(t, all.Jobs, 3)

	last := events()[len(events())-1]
	require.Equal(t, "queued", last.Action, "the new job is delivered like any queued job")
	require.Equal(t, again, last.Job.ID)
	require.Equal(t, 2, last.Job.RunAttempt)

	resp, err = c.Actions.RerunJobByID(ctx, "octo", "app", lost.ID)
	requireRefused(t, resp, err, "This job is not part of the latest attempt of its workflow run")
	resp, err = c.Actions.RerunJobByID(ctx, "octo", "app", again)
	requireRefused(t, resp, err, "The workflow run containing this job is already running")

	runJob(t, srv, again, "success")
	run, _, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "app", lost.RunID)
	require.NoError(t, err)
	require.Equal(t, "completed", run.GetStatus())
	require.Equal(t, "success", run.GetConclusion())
	require.Equal(t, 4, srv.CallCounts()["POST /repos/{owner}/{repo}/actions/jobs/{job}/rerun"])
}

func TestRerunRefusedWithoutActionsWrite(t *testing.T) {
	srv, c, _, _ := newRerunWorld(t)
	job := srv.QueueJob("octo/app", "build", nil)
	runJob(t, srv, job.ID, "failure")
	srv.SetActionsWrite(false)
	resp, err := c.Actions.RerunJobByID(context.Background(), "octo", "app", job.ID)
	requireRefused(t, resp, err, "Resource not accessible by integration")
	srv.SetActionsWrite(true)
	_, err = c.Actions.RerunJobByID(context.Background(), "octo", "app", job.ID)
	require.NoError(t, err)
}

func TestRerunRefusedForARunOverAMonthOld(t *testing.T) {
	srv, c, clk, _ := newRerunWorld(t)
	job := srv.QueueJob("octo/app", "build", nil)
	runJob(t, srv, job.ID, "failure")
	clk.Advance(31 * 24 * time.Hour)
	resp, err := c.Actions.RerunJobByID(context.Background(), "octo", "app", job.ID)
	requireRefused(t, resp, err, "Unable to retry this workflow run because it was created over a month ago")
	require.Empty(t, srv.Reruns())
}

func TestRerunRefusedAtFiftyAttempts(t *testing.T) {
	srv, c, _, _ := newRerunWorld(t)
	ctx := context.Background()
	jobID := srv.QueueJob("octo/app", "build", nil).ID
	for range 49 {
		runJob(t, srv, jobID, "failure")
		_, err := c.Actions.RerunJobByID(ctx, "octo", "app", jobID)
		require.NoError(t, err)
		reruns := srv.Reruns()
		jobID = reruns[len(reruns)-1].NewJobID
	}
	runJob(t, srv, jobID, "failure")
	info, _ := srv.Run(srv.Jobs()[0].RunID)
	require.Equal(t, 50, info.Attempt)
	resp, err := c.Actions.RerunJobByID(ctx, "octo", "app", jobID)
	requireRefused(t, resp, err, "This workflow run has reached the maximum of 50 attempts")
}

func TestRerunAndGetRunAreNotFoundElsewhere(t *testing.T) {
	srv, c, _, _ := newRerunWorld(t)
	ctx := context.Background()
	job := srv.QueueJob("octo/app", "build", nil)
	runJob(t, srv, job.ID, "success")

	resp, err := c.Actions.RerunJobByID(ctx, "octo", "other", job.ID)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "a job of another repository")
	resp, err = c.Actions.RerunJobByID(ctx, "octo", "app", 424242)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, resp, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "other", job.RunID)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_, resp, err = c.Actions.GetWorkflowRunByID(ctx, "octo", "app", 424242)
	require.Error(t, err)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	runs, _, err := c.Actions.ListRepositoryWorkflowRuns(ctx, "octo", "app", nil)
	require.NoError(t, err)
	require.Len(t, runs.WorkflowRuns, 1)
	require.Equal(t, 1, runs.WorkflowRuns[0].GetRunAttempt())
	require.Equal(t, "success", runs.WorkflowRuns[0].GetConclusion())
	_, err = srv.QueueJobInRun(job.RunID, "late", nil)
	require.Error(t, err, "a completed run takes no new job")
}
