package fakegithub

import (
	"net/http"
	"strconv"
	"time"
)

// GitHub's limits on re-runs (docs.github.com, "Re-running workflows and jobs"):
// a run can be re-run up to 30 days after it was created, and has at most 50
// attempts.
const (
	rerunWindow = 30 * 24 * time.Hour
	maxAttempts = 50
)

// RerunInfo is a job re-run GitHub accepted.
type RerunInfo struct {
	// JobID is the job re-run; NewJobID the job that runs it again.
	JobID, NewJobID int64
	RunID           int64
	// Attempt is the run's attempt the re-run started.
	Attempt int
	At      time.Time
}

// SetActionsWrite grants or withdraws the actions: write permission of every
// credential (granted by default). Without it GitHub refuses a re-run with 403
// "Resource not accessible by integration", as for an App installed without it.
func (s *Server) SetActionsWrite(allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noActionsWrite = !allowed
}

// Reruns returns every re-run GitHub accepted, in order.
func (s *Server) Reruns() []RerunInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RerunInfo(nil), s.reruns...)
}

// rerunJob answers POST /repos/{owner}/{repo}/actions/jobs/{job}/rerun, with
// GitHub's rules: the job's run starts a new attempt (run_attempt + 1) in which
// the job runs again as a new job, with a new ID and a queued delivery; the
// run's other finished jobs are copied into the attempt as they are (the fake's
// jobs need none of each other, so none is re-run with it). 201 with {} on
// success.
func (s *Server) rerunJob(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	jobID, err := strconv.ParseInt(r.PathValue("job"), 10, 64)
	s.mu.Lock()
	old, ok := s.jobs[jobID]
	if err != nil || !ok || old.Repo != repo {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rn := s.runs[old.RunID]
	if refusal := s.rerunRefusal(rn, old); refusal != "" {
		s.mu.Unlock()
		writeError(w, http.StatusForbidden, refusal)
		return
	}
	old.Superseded = true
	rn.Attempt++
	j := s.newJob(rn, old.Name, old.Labels)
	s.refresh(rn)
	s.reruns = append(s.reruns, RerunInfo{JobID: old.ID, NewJobID: j.ID, RunID: rn.ID, Attempt: rn.Attempt, At: s.now()})
	info := j.info()
	s.mu.Unlock()
	s.emit(JobEvent{Action: "queued", Job: info})
	writeJSON(w, http.StatusCreated, map[string]any{})
}

// rerunRefusal is GitHub's 403 message for a re-run of j it refuses, or "".
// Callers hold s.mu.
func (s *Server) rerunRefusal(rn *run, j *job) string {
	switch {
	case s.noActionsWrite:
		return "Resource not accessible by integration"
	case j.Superseded:
		// Only a job of the run's latest attempt can be re-run. GitHub's message
		// for an older attempt's job is not verified; this one is the fake's.
		return "This job is not part of the latest attempt of its workflow run"
	case rn.Status != "completed":
		return "The workflow run containing this job is already running"
	case s.now().Sub(rn.CreatedAt) > rerunWindow:
		return "Unable to retry this workflow run because it was created over a month ago"
	case rn.Attempt >= maxAttempts:
		// GitHub's message at the attempt limit is not verified either.
		return "This workflow run has reached the maximum of 50 attempts"
	}
	return ""
}
