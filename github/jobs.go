package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v88/github"
)

// Job is a workflow job as the metrics, the reconcile and a re-run need it.
type Job struct {
	ID     int64
	Status string // queued, in_progress, completed
	Labels []string
	// Name, RunAttempt and RunnerName (empty until a runner took it).
	Name       string
	RunAttempt int
	RunnerName string
}

// openJobsPage is how the reconcile and the metrics page a run's jobs: its
// latest attempt, 50 a page, as ARC does.
var openJobsPage = gogithub.ListWorkflowJobsOptions{ListOptions: gogithub.ListOptions{PerPage: 50}}

// ListOpenJobs lists the queued and in-progress jobs of a repository (owner/name):
// runs with status queued and in_progress (100 a page), then each run's jobs (50 a
// page), all through the HTTP cache, as ARC's TotalNumberOfQueuedAndInProgressWorkflowRuns does.
func (c *Client) ListOpenJobs(ctx context.Context, repository string) ([]Job, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return nil, fmt.Errorf("list jobs: repository %q must be owner/name", repository)
	}
	var jobs []Job
	for _, status := range []string{"queued", "in_progress"} {
		runs, err := c.listRuns(ctx, owner, repo, status)
		if err != nil {
			return nil, err
		}
		for _, run := range runs {
			page, err := c.listRunJobs(ctx, owner, repo, run.ID, openJobsPage)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, page...)
		}
	}
	return jobs, nil
}

// Run is a workflow run as the reconcile needs it.
type Run struct {
	ID int64
	// CreatedAt is when GitHub queued the run.
	CreatedAt time.Time
}

// OpenRuns lists a repository's queued and in-progress workflow runs: two
// calls (more only past 100 runs), through the HTTP cache. While the call
// budget is spent it returns ErrDeferred.
func (c *Client) OpenRuns(ctx context.Context, repository string) (queued, inProgress []Run, err error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return nil, nil, fmt.Errorf("list runs: repository %q must be owner/name", repository)
	}
	if c.Throttled() {
		c.metrics.Deferred.WithLabelValues(c.config.CredentialName(), "list-workflow-runs").Inc()
		return nil, nil, ErrDeferred
	}
	if queued, err = c.listRuns(ctx, owner, repo, "queued"); err != nil {
		return nil, nil, err
	}
	if inProgress, err = c.listRuns(ctx, owner, repo, "in_progress"); err != nil {
		return nil, nil, err
	}
	return queued, inProgress, nil
}

// RunJobs lists the jobs of one workflow run, through the HTTP cache.
func (c *Client) RunJobs(ctx context.Context, repository string, runID int64) ([]Job, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return nil, fmt.Errorf("list jobs: repository %q must be owner/name", repository)
	}
	return c.listRunJobs(ctx, owner, repo, runID, openJobsPage)
}

func (c *Client) listRuns(ctx context.Context, owner, repo, status string) ([]Run, error) {
	ctx = withEndpoint(ctx, "list-workflow-runs")
	var out []Run
	opts := &gogithub.ListWorkflowRunsOptions{Status: status, ListOptions: gogithub.ListOptions{PerPage: 100}}
	for {
		runs, resp, err := c.gh.Actions.ListRepositoryWorkflowRuns(ctx, owner, repo, opts)
		if err := classify("list-workflow-runs "+owner+"/"+repo, resp, err, c.now()); err != nil {
			return nil, err
		}
		for _, r := range runs.WorkflowRuns {
			if r.GetID() != 0 {
				out = append(out, Run{ID: r.GetID(), CreatedAt: r.GetCreatedAt().Time})
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// listRunJobs lists a run's jobs, every page from opts on (its Filter says
// which attempts); a run gone meanwhile has none.
func (c *Client) listRunJobs(ctx context.Context, owner, repo string, runID int64, opts gogithub.ListWorkflowJobsOptions) ([]Job, error) {
	ctx = withEndpoint(ctx, "list-workflow-jobs")
	var jobs []Job
	for {
		page, resp, err := c.gh.Actions.ListWorkflowJobs(ctx, owner, repo, runID, &opts)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return jobs, nil // the run went away between the two calls
		}
		if err := classify(fmt.Sprintf("list-workflow-jobs %s/%s/%d", owner, repo, runID), resp, err, c.now()); err != nil {
			return nil, err
		}
		for _, j := range page.Jobs {
			jobs = append(jobs, Job{ID: j.GetID(), Status: j.GetStatus(), Labels: j.Labels,
				Name: j.GetName(), RunAttempt: int(j.GetRunAttempt()), RunnerName: j.GetRunnerName()})
		}
		if resp.NextPage == 0 {
			return jobs, nil
		}
		opts.Page = resp.NextPage
	}
}
