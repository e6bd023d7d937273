package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v88/github"
)

// RunnerJob is the workflow job a runner ran, as a re-run of it needs it.
type RunnerJob struct {
	RunID, JobID int64
	Name         string
	RunAttempt   int
}

// Bounds of FindRunnerJob's search of a repository's runs when the run is
// not known: a job is queued after its run is created, and a run older than
// a day holds no job whose runner was lost minutes ago.
const (
	runnerJobSearchRuns  = 50
	runnerJobSearchPages = 4
	runnerJobSearchAge   = 24 * time.Hour
)

// FindRunnerJob finds the job that runnerName ran in repository (owner/name).
// A runner scale set names a job by an id of its own, and often names no
// run: the job is found by its runner, whose name is unique. With runID it
// lists that run's jobs, every attempt (one call a page). With runID 0 it
// walks the repository's runs, newest first, skipping those created after
// queuedAt (when it is known), and lists each one's jobs until one names the
// runner: at most runnerJobSearchPages pages of runs, back a day from
// queuedAt. found is false when no job names the runner.
func (c *Client) FindRunnerJob(ctx context.Context, repository string, runID int64, runnerName string, queuedAt time.Time) (job RunnerJob, found bool, err error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return RunnerJob{}, false, fmt.Errorf("find runner job: repository %q must be owner/name", repository)
	}
	if runID != 0 {
		return c.runnerJobIn(ctx, owner, repo, runID, runnerName)
	}
	ctx = withEndpoint(ctx, "list-workflow-runs")
	opts := &gogithub.ListWorkflowRunsOptions{ListOptions: gogithub.ListOptions{PerPage: runnerJobSearchRuns}}
	for range runnerJobSearchPages {
		runs, resp, err := c.gh.Actions.ListRepositoryWorkflowRuns(ctx, owner, repo, opts)
		if err := classify("list-workflow-runs "+repository, resp, err, c.now()); err != nil {
			return RunnerJob{}, false, err
		}
		for _, r := range runs.WorkflowRuns {
			created := r.GetCreatedAt().Time
			if !queuedAt.IsZero() && created.After(queuedAt.Add(time.Minute)) {
				continue // made after the job was queued: not its run
			}
			if !queuedAt.IsZero() && created.Before(queuedAt.Add(-runnerJobSearchAge)) {
				return RunnerJob{}, false, nil // newest first: the rest are older still
			}
			if job, found, err := c.runnerJobIn(ctx, owner, repo, r.GetID(), runnerName); err != nil || found {
				return job, found, err
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return RunnerJob{}, false, nil
}

// runnerJobIn lists one run's jobs of every attempt and returns the one that
// ran on runnerName.
func (c *Client) runnerJobIn(ctx context.Context, owner, repo string, runID int64, runnerName string) (RunnerJob, bool, error) {
	jobs, err := c.listRunJobs(ctx, owner, repo, runID, gogithub.ListWorkflowJobsOptions{Filter: "all", ListOptions: gogithub.ListOptions{PerPage: 100}})
	if err != nil {
		return RunnerJob{}, false, err
	}
	for _, j := range jobs {
		if j.RunnerName == runnerName {
			return RunnerJob{RunID: runID, JobID: j.ID, Name: j.Name, RunAttempt: j.RunAttempt}, true, nil
		}
	}
	return RunnerJob{}, false, nil
}
