package fakegithub

import (
	"net/http"
	"sort"
	"strconv"
	"time"
)

type job struct {
	ID    int64
	RunID int64
	// RunAttempt is the attempt of its run the job ran in (GitHub's run_attempt).
	RunAttempt int
	// Superseded: a re-run replaced the job with a new one in a later attempt.
	Superseded  bool
	Repo        string
	Name        string
	Labels      []string
	Status      string // queued, in_progress, completed
	Conclusion  string
	RunnerName  string
	RunnerID    int64
	CreatedAt   time.Time
	StartedAt   time.Time
	CompletedAt time.Time
	// set is the job's scale set assignment, if its labels target one.
	set setJob
}

func (j *job) json() map[string]any {
	out := map[string]any{
		"id": j.ID, "run_id": j.RunID, "run_attempt": j.RunAttempt, "name": j.Name, "status": j.Status, "labels": j.Labels,
		"created_at": j.CreatedAt.UTC().Format(time.RFC3339),
	}
	if j.Conclusion != "" {
		out["conclusion"] = j.Conclusion
	}
	if j.RunnerName != "" {
		out["runner_name"], out["runner_id"] = j.RunnerName, j.RunnerID
		out["started_at"] = j.StartedAt.UTC().Format(time.RFC3339)
	}
	if !j.CompletedAt.IsZero() {
		out["completed_at"] = j.CompletedAt.UTC().Format(time.RFC3339)
	}
	return out
}

func (s *Server) listWorkflowRuns(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	status := r.URL.Query().Get("status")
	page, perPage := pagination(r)
	s.mu.Lock()
	var all []*run
	for _, rn := range s.runs {
		if rn.Repo == repo && (status == "" || rn.Status == status) {
			all = append(all, rn)
		}
	}
	// Newest first, as GitHub lists them.
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID })
	items := []map[string]any{}
	for _, rn := range pageOf(all, page, perPage) {
		items = append(items, rn.json())
	}
	s.mu.Unlock()
	s.writeList(w, r, len(all), page, perPage, map[string]any{"total_count": len(all), "workflow_runs": items})
}

// listWorkflowJobs lists a run's jobs: by default (filter=latest) those of its
// latest attempt, with filter=all also those a re-run replaced, as GitHub does.
func (s *Server) listWorkflowJobs(w http.ResponseWriter, r *http.Request) {
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	runID, _ := strconv.ParseInt(r.PathValue("run"), 10, 64)
	everyAttempt := r.URL.Query().Get("filter") == "all"
	page, perPage := pagination(r)
	s.mu.Lock()
	if rn, ok := s.runs[runID]; !ok || rn.Repo != repo {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	var all []*job
	for _, j := range s.jobs {
		if j.RunID == runID && (everyAttempt || !j.Superseded) {
			all = append(all, j)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	items := []map[string]any{}
	for _, j := range pageOf(all, page, perPage) {
		items = append(items, j.json())
	}
	s.mu.Unlock()
	s.writeList(w, r, len(all), page, perPage, map[string]any{"total_count": len(all), "jobs": items})
}
