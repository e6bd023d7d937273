package fakegithub

import (
	"net/http"
	"slices"
)

// RunnerGroup is an organization's runner group.
type RunnerGroup struct {
	ID         int64
	Name       string
	Default    bool
	Inherited  bool     // shared from the enterprise
	Visibility string   // all or selected
	Repos      []string // repository names visible to a "selected" group
}

// AddRunnerGroup adds a runner group to an organization.
func (s *Server) AddRunnerGroup(org string, g RunnerGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	g.ID = s.nextID
	if g.Visibility == "" {
		g.Visibility = "all"
	}
	s.groups[org] = append(s.groups[org], &g)
}

func (s *Server) listRunnerGroups(w http.ResponseWriter, r *http.Request) {
	org := r.PathValue("org")
	visibleTo := r.URL.Query().Get("visible_to_repository")
	page, perPage := pagination(r)
	s.mu.Lock()
	var all []*RunnerGroup
	for _, g := range s.groups[org] {
		if visibleTo == "" || g.Visibility == "all" || slices.Contains(g.Repos, visibleTo) {
			all = append(all, g)
		}
	}
	items := []map[string]any{}
	for _, g := range pageOf(all, page, perPage) {
		items = append(items, map[string]any{"id": g.ID, "name": g.Name, "default": g.Default, "inherited": g.Inherited, "visibility": g.Visibility})
	}
	s.mu.Unlock()
	s.writeList(w, r, len(all), page, perPage, map[string]any{"total_count": len(all), "runner_groups": items})
}
