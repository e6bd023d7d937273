package sim

import (
	"encoding/json"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v88/github"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// workflowJobPayload builds the body GitHub sends for a workflow_job event, in
// go-github's (and so GitHub's) JSON shape. An organization is set when the
// repository's owner is one, as GitHub does for organization-owned repositories.
func workflowJobPayload(e fakegithub.JobEvent, ownerIsOrg bool) ([]byte, error) {
	owner, name, ok := strings.Cut(e.Job.Repo, "/")
	if !ok {
		return nil, fmt.Errorf("job %d: repository %q is not owner/name", e.Job.ID, e.Job.Repo)
	}
	job := &gh.WorkflowJob{
		ID:    gh.Ptr(e.Job.ID),
		RunID: gh.Ptr(e.Job.RunID),
		// GitHub's run_attempt starts at 1; events made by hand may leave it 0.
		RunAttempt: gh.Ptr(int64(max(e.Job.RunAttempt, 1))),
		Name:       gh.Ptr(e.Job.Name),
		Status:     gh.Ptr(e.Job.Status),
		Labels:     e.Job.Labels,
		CreatedAt:  &gh.Timestamp{Time: e.Job.CreatedAt},
		HTMLURL:    gh.Ptr(fmt.Sprintf("https://github.com/%s/actions/runs/%d/job/%d", e.Job.Repo, e.Job.RunID, e.Job.ID)),
	}
	if e.Job.Conclusion != "" {
		job.Conclusion = gh.Ptr(e.Job.Conclusion)
	}
	if e.Runner.Name != "" {
		job.RunnerName, job.RunnerID = gh.Ptr(e.Runner.Name), gh.Ptr(e.Runner.ID)
		job.StartedAt = &gh.Timestamp{Time: e.Job.StartedAt}
	}
	if !e.Job.CompletedAt.IsZero() {
		job.CompletedAt = &gh.Timestamp{Time: e.Job.CompletedAt}
	}
	ownerType := "User"
	if ownerIsOrg {
		ownerType = "Organization"
	}
	event := &gh.WorkflowJobEvent{
		Action:      gh.Ptr(e.Action),
		WorkflowJob: job,
		Repo: &gh.Repository{
			Name: gh.Ptr(name), FullName: gh.Ptr(e.Job.Repo),
			Owner: &gh.User{Login: gh.Ptr(owner), Type: gh.Ptr(ownerType)},
		},
		Sender: &gh.User{Login: gh.Ptr("octocat"), Type: gh.Ptr("User")},
	}
	if ownerIsOrg {
		event.Org = &gh.Organization{Login: gh.Ptr(owner)}
	}
	body, err := json.Marshal(event)
	if err != nil {
		return nil, fmt.Errorf("job %d: encode workflow_job payload: %w", e.Job.ID, err)
	}
	return body, nil
}
