package fakegithub

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
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
	// ScaleSetID is the set whose JIT configuration made the runner: it
	// takes that set's jobs and no others.
	ScaleSetID int64
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

// jitConfig is what the fake's encoded JIT configuration holds. GitHub's holds
// the runner's settings and credential files; the fake's one credential makes
// it as single-use and unguessable.
type jitConfig struct {
	RunnerID   int64  `json:"runner_id"`
	Name       string `json:"name"`
	Scope      string `json:"scope"`
	Credential string `json:"credential"`
}

func (s *Server) generateJITConfig(w http.ResponseWriter, r *http.Request, scope string) {
	var req struct {
		Name          string   `json:"name"`
		RunnerGroupID int64    `json:"runner_group_id"`
		Labels        []string `json:"labels"`
		WorkFolder    string   `json:"work_folder"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || len(req.Labels) == 0 || req.RunnerGroupID == 0 {
		writeError(w, http.StatusUnprocessableEntity, "name, runner_group_id and labels are required")
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
	group, ok := s.groupNamed(scope, req.RunnerGroupID)
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "Runner group not found")
		return
	}
	s.nextID++
	var labels []string
	for _, l := range req.Labels {
		if l != "self-hosted" { // the fake adds it to every runner
			labels = append(labels, l)
		}
	}
	rn := &runner{ID: s.nextID, Name: req.Name, Scope: scope, Labels: labels, Group: group, Ephemeral: true}
	s.runners[rn.ID] = rn
	credential := newToken()
	s.jitCredentials[credential] = rn.ID
	out := rn.json()
	s.mu.Unlock()
	encoded, _ := json.Marshal(jitConfig{RunnerID: rn.ID, Name: rn.Name, Scope: scope, Credential: credential})
	writeJSON(w, http.StatusCreated, map[string]any{"runner": out, "encoded_jit_config": base64.StdEncoding.EncodeToString(encoded)})
}

// groupNamed is the name of a scope's runner group by ID: "" for the Default
// group (ID 1). Callers hold s.mu.
func (s *Server) groupNamed(scope string, id int64) (string, bool) {
	if id == 1 {
		return "", true
	}
	org, isOrg := strings.CutPrefix(scope, "orgs/")
	if !isOrg {
		return "", false
	}
	for _, g := range s.groups[org] {
		if g.ID == id {
			return g.Name, true
		}
	}
	return "", false
}
