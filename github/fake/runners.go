package fake

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"
)

type issuedToken struct {
	scope     string
	expiresAt time.Time
}

type runner struct {
	ID        int64
	Name      string
	Scope     string
	Labels    []string
	Group     string
	Ephemeral bool
	Online    bool
	Busy      bool
	JobID     int64
}

type runnerJSON struct {
	ID        int64       `json:"id"`
	Name      string      `json:"name"`
	OS        string      `json:"os"`
	Status    string      `json:"status"`
	Busy      bool        `json:"busy"`
	Ephemeral bool        `json:"ephemeral"`
	Labels    []labelJSON `json:"labels"`
}

type labelJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

func (r *runner) json() runnerJSON {
	status := "offline"
	if r.Online {
		status = "online"
	}
	out := runnerJSON{ID: r.ID, Name: r.Name, OS: "Linux", Status: status, Busy: r.Busy, Ephemeral: r.Ephemeral}
	for i, l := range append([]string{"self-hosted"}, r.Labels...) {
		out.Labels = append(out.Labels, labelJSON{ID: int64(i + 1), Name: l, Type: "custom"})
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

func newToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return "AFAKE" + hex.EncodeToString(b)
}

func (s *Server) createRegistrationToken(w http.ResponseWriter, _ *http.Request, scope string) {
	s.mu.Lock()
	token, expires := newToken(), s.now().Add(time.Hour).UTC().Truncate(time.Second)
	s.tokens[token] = issuedToken{scope: scope, expiresAt: expires}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"token": token, "expires_at": expires.Format(time.RFC3339)})
}

// scopeRunners returns a scope's runners ordered by ID. Callers hold s.mu.
func (s *Server) scopeRunners(scope string) []*runner {
	var list []*runner
	for _, r := range s.runners {
		if r.Scope == scope {
			list = append(list, r)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	return list
}

func (s *Server) listRunners(w http.ResponseWriter, r *http.Request, scope string) {
	page, perPage := pagination(r)
	s.mu.Lock()
	all := s.scopeRunners(scope)
	items := make([]runnerJSON, 0, perPage)
	for _, rn := range pageOf(all, page, perPage) {
		items = append(items, rn.json())
	}
	s.mu.Unlock()
	s.writeList(w, r, len(all), page, perPage, map[string]any{"total_count": len(all), "runners": items})
}

func (s *Server) removeRunner(w http.ResponseWriter, r *http.Request, scope string) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rn, ok := s.runners[id]
	switch {
	case !ok || rn.Scope != scope:
		writeError(w, http.StatusNotFound, "Not Found")
	case rn.Busy:
		writeError(w, http.StatusUnprocessableEntity, "Bad request - Runner \""+rn.Name+"\" is still running a job\"")
	default:
		delete(s.runners, id)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) generateJITConfig(w http.ResponseWriter, r *http.Request, scope string) {
	var req struct {
		Name          string   `json:"name"`
		RunnerGroupID int64    `json:"runner_group_id"`
		Labels        []string `json:"labels"`
		WorkFolder    string   `json:"work_folder"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || len(req.Labels) == 0 {
		writeError(w, http.StatusUnprocessableEntity, "name and labels are required")
		return
	}
	s.mu.Lock()
	for _, existing := range s.scopeRunners(scope) {
		if existing.Name == req.Name {
			s.mu.Unlock()
			writeError(w, http.StatusConflict, "Already exists - A runner with the name "+req.Name+" already exists.")
			return
		}
	}
	s.nextID++
	rn := &runner{ID: s.nextID, Name: req.Name, Scope: scope, Labels: req.Labels, Ephemeral: true}
	s.runners[rn.ID] = rn
	out := rn.json()
	s.mu.Unlock()
	config := base64.StdEncoding.EncodeToString([]byte(`{"runner":"` + req.Name + `","scope":"` + scope + `"}`))
	writeJSON(w, http.StatusCreated, map[string]any{"runner": out, "encoded_jit_config": config})
}
