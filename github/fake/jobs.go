package fake

import (
	"net/http"
	"sort"
	"strconv"
	"time"
)

type run struct {
	ID        int64
	Repo      string // owner/name
	Status    string // queued, in_progress, completed
	CreatedAt time.Time
}

type job struct {
	ID          int64
	RunID       int64
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
}

func (j *job) json() map[string]any {
	out := map[string]any{
		"id": j.ID, "run_id": j.RunID, "name": j.Name, "status": j.Status, "labels": j.Labels,
		"created_at": j.CreatedAt.UTC().Format(time.RFC3339),
	}
	if j.Conclusion != "" {
		out["conclusion"] = j.Conclusion
	}
	if j.RunnerName != "" {
		out["runner_name"], out["runner_id"] = j.RunnerName, j.RunnerID
		out["started_at"] = j.StartedAt.UTC().Format(time.RFC3339)
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
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	items := []map[string]any{}
	for _, rn := range pageOf(all, page, perPage) {
		items = append(items, map[string]any{"id": rn.ID, "status": rn.Status, "repository": map[string]any{"full_name": rn.Repo},
			"created_at": rn.CreatedAt.UTC().Format(time.RFC3339)})
	}
	s.mu.Unlock()
	s.writeList(w, r, len(all), page, perPage, map[string]any{"total_count": len(all), "workflow_runs": items})
}

func (s *Server) listWorkflowJobs(w http.ResponseWriter, r *http.Request) {
	runID, _ := strconv.ParseInt(r.PathValue("run"), 10, 64)
	page, perPage := pagination(r)
	s.mu.Lock()
	if _, ok := s.runs[runID]; !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	var all []*job
	for _, j := range s.jobs {
		if j.RunID == runID {
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
