package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// run is a workflow run. Its status and conclusion follow from the jobs of its
// current attempt (refresh); Attempt is GitHub's run_attempt, 1 for the first
// execution and one more for each re-run.
type run struct {
	ID         int64
	Repo       string // owner/name
	Status     string // queued, in_progress, completed
	Conclusion string // success or failure, once completed
	Attempt    int
	CreatedAt  time.Time
}

func (rn *run) json() map[string]any {
	out := map[string]any{
		"id": rn.ID, "status": rn.Status, "run_attempt": rn.Attempt,
		"repository": map[string]any{"full_name": rn.Repo},
		"created_at": rn.CreatedAt.UTC().Format(time.RFC3339),
	}
	if rn.Conclusion != "" {
		out["conclusion"] = rn.Conclusion
	}
	return out
}

// attemptJobs are the jobs that make up a run's current attempt: every job of
// the run that no re-run replaced. GitHub copies a finished job that was not
// re-run into the new attempt, so it stays one of these. Callers hold s.mu.
func (s *Server) attemptJobs(runID int64) []*job {
	var out []*job
	for _, j := range s.jobs {
		if j.RunID == runID && !j.Superseded {
			out = append(out, j)
		}
	}
	return out
}

// refresh derives a run's status and conclusion from its current attempt, as
// GitHub does: completed once every job of the attempt completed, and then
// failure if any of them failed or was cancelled, success otherwise; queued
// while none of the jobs this attempt runs has started; in_progress between.
// Callers hold s.mu.
func (s *Server) refresh(rn *run) {
	completed, started, failed := true, false, false
	for _, j := range s.attemptJobs(rn.ID) {
		done := j.Status == "completed"
		completed = completed && done
		// A job copied from an earlier attempt does not start this one.
		started = started || j.Status == "in_progress" || (done && j.RunAttempt == rn.Attempt)
		failed = failed || (done && (j.Conclusion == "failure" || j.Conclusion == "cancelled"))
	}
	switch {
	case completed:
		rn.Status, rn.Conclusion = "completed", "success"
		if failed {
			rn.Conclusion = "failure"
		}
	case started:
		rn.Status, rn.Conclusion = "in_progress", ""
	default:
		rn.Status, rn.Conclusion = "queued", ""
	}
}

// QueueJobInRun queues another job in an existing workflow run, in its current
// attempt, so a test can have a run whose other jobs still run. A completed run
// takes no new job: on GitHub every job of a run exists from its start (those
// that wait for others as pending), so a run never reopens by growing.
func (s *Server) QueueJobInRun(runID int64, name string, labels []string) (JobInfo, error) {
	s.mu.Lock()
	rn, ok := s.runs[runID]
	if !ok || rn.Status == "completed" {
		s.mu.Unlock()
		return JobInfo{}, fmt.Errorf("fake github: run %d is unknown or completed", runID)
	}
	j := s.newJob(rn, name, labels)
	s.refresh(rn)
	info := j.info()
	s.mu.Unlock()
	s.emit(JobEvent{Action: "queued", Job: info})
	return info, nil
}

// newJob adds a queued job to rn's current attempt. Callers hold s.mu.
func (s *Server) newJob(rn *run, name string, labels []string) *job {
	s.nextID++
	j := &job{ID: s.nextID, RunID: rn.ID, RunAttempt: rn.Attempt, Repo: rn.Repo, Name: name, Labels: labels, Status: "queued", CreatedAt: s.now()}
	s.jobs[j.ID] = j
	s.assignToSets()
	return j
}

// getWorkflowRun answers GET /repos/{owner}/{repo}/actions/runs/{run}: 404 for
// an unknown run or one of another repository, as GitHub does.
func (s *Server) getWorkflowRun(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	runID, err := strconv.ParseInt(r.PathValue("run"), 10, 64)
	s.mu.Lock()
	rn, ok := s.runs[runID]
	if err != nil || !ok || rn.Repo != repo {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	body := rn.json()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

// RunInfo is a workflow run as a test sees it.
type RunInfo struct {
	ID         int64     `json:"id"`
	Repo       string    `json:"repo"`
	Status     string    `json:"status"`
	Conclusion string    `json:"conclusion,omitempty"`
	Attempt    int       `json:"run_attempt"`
	CreatedAt  time.Time `json:"created_at"`
}

// Run returns a workflow run by ID.
func (s *Server) Run(runID int64) (RunInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn, ok := s.runs[runID]
	if !ok {
		return RunInfo{}, false
	}
	return RunInfo{ID: rn.ID, Repo: rn.Repo, Status: rn.Status, Conclusion: rn.Conclusion, Attempt: rn.Attempt, CreatedAt: rn.CreatedAt}, true
}
