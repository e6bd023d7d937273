package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v88/github"
)

// RunState is a workflow run as a re-run of one of its jobs needs it.
type RunState struct {
	ID                 int64
	Status, Conclusion string
	// Attempt is the run's run_attempt: each re-run makes a new attempt.
	Attempt   int
	CreatedAt time.Time
}

// Completed reports a run whose attempt is over: only then does GitHub take a
// re-run of one of its jobs.
func (r RunState) Completed() bool { return r.Status == "completed" }

// RerunRefusedError is GitHub's 403 on a job re-run, with its message: the run
// is still running, the run is over a month old, it has had its 50 attempts,
// or the credentials lack actions: write (NoPermission).
type RerunRefusedError struct {
	Message string
	// NoPermission: GitHub said the credentials may not re-run jobs
	// ("Resource not accessible by integration", or a token without the scope).
	NoPermission bool
	// Running: the job's run has not completed yet; the re-run may come later.
	Running bool
}

func (e *RerunRefusedError) Error() string { return "github: job re-run refused: " + e.Message }

// WorkflowRun reads one workflow run of repository (owner/name).
func (c *Client) WorkflowRun(ctx context.Context, repository string, runID int64) (RunState, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return RunState{}, fmt.Errorf("get workflow run: repository %q must be owner/name", repository)
	}
	ctx = withEndpoint(ctx, "get-workflow-run")
	run, resp, err := c.gh.Actions.GetWorkflowRunByID(ctx, owner, repo, runID)
	if err := classify(fmt.Sprintf("get-workflow-run %s/%d", repository, runID), resp, err, c.now()); err != nil {
		return RunState{}, err
	}
	return RunState{ID: run.GetID(), Status: run.GetStatus(), Conclusion: run.GetConclusion(),
		Attempt: run.GetRunAttempt(), CreatedAt: run.GetCreatedAt().Time}, nil
}

// RerunJob asks GitHub to re-run a job (POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun),
// which starts a new attempt of its run with the job and those that need it.
// A refusal is a *RerunRefusedError.
func (c *Client) RerunJob(ctx context.Context, repository string, jobID int64) error {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok {
		return fmt.Errorf("re-run job: repository %q must be owner/name", repository)
	}
	ctx = withEndpoint(ctx, "rerun-job")
	resp, err := c.gh.Actions.RerunJobByID(ctx, owner, repo, jobID)
	var ghErr *gogithub.ErrorResponse
	if resp != nil && resp.StatusCode == http.StatusForbidden && errors.As(err, &ghErr) {
		msg := ghErr.Message
		lower := strings.ToLower(msg)
		return &RerunRefusedError{Message: msg,
			NoPermission: strings.Contains(lower, "not accessible") || strings.Contains(lower, "permission"),
			Running:      strings.Contains(lower, "already running")}
	}
	return classify(fmt.Sprintf("rerun-job %s/%d", repository, jobID), resp, err, c.now())
}
