package fakegithub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// The scale set endpoints, under the Actions service's base URL.
const (
	setsPath   = "_apis/runtime/runnerscalesets"
	agentsPath = "_apis/distributedtask/pools/0/agents"
)

func (s *Server) actionsRoutes() {
	p := "/actions-service/"
	s.mux.HandleFunc("POST /actions/runner-registration", s.runnerRegistration)
	s.mux.HandleFunc("GET "+p+"_apis/runtime/runnergroups/", s.withAdmin(s.listSetGroups))
	s.mux.HandleFunc("GET "+p+setsPath, s.withAdmin(s.findScaleSet))
	s.mux.HandleFunc("POST "+p+setsPath, s.withAdmin(s.createScaleSet))
	s.mux.HandleFunc("GET "+p+setsPath+"/{id}", s.withSet(s.getScaleSet))
	s.mux.HandleFunc("DELETE "+p+setsPath+"/{id}", s.withSet(s.deleteScaleSet))
	s.mux.HandleFunc("POST "+p+setsPath+"/{id}/sessions", s.withSet(s.createSession))
	s.mux.HandleFunc("PATCH "+p+setsPath+"/{id}/sessions/{sid}", s.withSet(s.refreshSession))
	s.mux.HandleFunc("DELETE "+p+setsPath+"/{id}/sessions/{sid}", s.withSet(s.deleteSession))
	s.mux.HandleFunc("POST "+p+setsPath+"/{id}/generatejitconfig", s.withSet(s.setJITConfig))
	s.mux.HandleFunc("POST "+p+setsPath+"/{id}/acquirejobs", s.acquireJobs)
	s.mux.HandleFunc("GET "+p+setsPath+"/{id}/acquirablejobs", s.withSet(s.acquirableJobs))
	s.mux.HandleFunc("GET "+p+agentsPath, s.withAdmin(s.findAgent))
	s.mux.HandleFunc("GET "+p+agentsPath+"/{id}", s.withAdmin(s.getAgent))
	s.mux.HandleFunc("DELETE "+p+agentsPath+"/{id}", s.withAdmin(s.deleteAgent))
	s.mux.HandleFunc("GET "+p+setsPath+"/{id}/messages", s.pollMessage)
	s.mux.HandleFunc("DELETE "+p+setsPath+"/{id}/messages/{mid}", s.deleteMessage)
}

// withAdmin runs h with s.mu held for a request with a live admin token.
func (s *Server) withAdmin(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		scope, ok := s.adminScope(r)
		if !ok {
			s.mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h(w, r, scope)
		s.mu.Unlock()
	}
}

// withSet is withAdmin for a request about the set in the path: 404 when the
// scope has no such set.
func (s *Server) withSet(h func(http.ResponseWriter, *http.Request, *scaleSet)) http.HandlerFunc {
	return s.withAdmin(func(w http.ResponseWriter, r *http.Request, scope string) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		set, ok := s.actions.sets[id]
		if !ok || set.Scope != scope {
			s.writeActionsErrorLocked(w, http.StatusNotFound, excSetNotFound, fmt.Sprintf("runner scale set %d not found", id))
			return
		}
		h(w, r, set)
	})
}

func (s *Server) listSetGroups(w http.ResponseWriter, r *http.Request, scope string) {
	name := r.URL.Query().Get("groupName")
	type group struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	var found []group
	if strings.EqualFold(name, "default") {
		found = append(found, group{ID: 1, Name: "Default"})
	}
	if org, ok := strings.CutPrefix(scope, "orgs/"); ok {
		for _, g := range s.groups[org] {
			if strings.EqualFold(g.Name, name) && g.ID != 1 {
				found = append(found, group{ID: g.ID, Name: g.Name})
			}
		}
	}
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{"count": len(found), "value": found})
}

// setJSON is a scale set as the service answers it.
func (set *scaleSet) json() map[string]any {
	labels := make([]map[string]string, 0, len(set.Labels))
	for _, l := range set.Labels {
		labels = append(labels, map[string]string{"name": l, "type": "System"})
	}
	return map[string]any{"id": set.ID, "name": set.Name, "runnerGroupId": set.RunnerGroupID, "labels": labels,
		"runnerSetting": map[string]any{"disableUpdate": set.DisableUpdate}}
}

func (s *Server) findScaleSet(w http.ResponseWriter, r *http.Request, scope string) {
	groupID, _ := strconv.ParseInt(r.URL.Query().Get("runnerGroupId"), 10, 64)
	name := r.URL.Query().Get("name")
	found := []map[string]any{}
	for _, set := range s.actions.sets {
		if set.Scope == scope && set.RunnerGroupID == groupID && set.Name == name {
			found = append(found, set.json())
		}
	}
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{"count": len(found), "value": found})
}

func (s *Server) createScaleSet(w http.ResponseWriter, r *http.Request, scope string) {
	var req struct {
		Name          string `json:"name"`
		RunnerGroupID int64  `json:"runnerGroupId"`
		Labels        []struct {
			Name string `json:"name"`
		} `json:"labels"`
		RunnerSetting struct {
			DisableUpdate bool `json:"disableUpdate"`
		} `json:"RunnerSetting"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" || req.RunnerGroupID == 0 {
		s.writeActionsErrorLocked(w, http.StatusBadRequest, excArgument, "name and runnerGroupId are required")
		return
	}
	for _, set := range s.actions.sets {
		if set.Scope == scope && set.RunnerGroupID == req.RunnerGroupID && set.Name == req.Name {
			s.writeActionsErrorLocked(w, http.StatusBadRequest, excSetExists, "a runner scale set named "+req.Name+" exists in the group")
			return
		}
	}
	s.actions.nextSetID++
	set := &scaleSet{ID: s.actions.nextSetID, Name: req.Name, RunnerGroupID: req.RunnerGroupID, Scope: scope,
		DisableUpdate: req.RunnerSetting.DisableUpdate, maxCapacity: -1}
	for _, l := range req.Labels {
		set.Labels = append(set.Labels, l.Name)
	}
	s.actions.sets[set.ID] = set
	s.assignToSets()
	s.writeActionsJSONLocked(w, http.StatusOK, set.json())
}

func (s *Server) getScaleSet(w http.ResponseWriter, _ *http.Request, set *scaleSet) {
	s.writeActionsJSONLocked(w, http.StatusOK, set.json())
}

func (s *Server) deleteScaleSet(w http.ResponseWriter, _ *http.Request, set *scaleSet) {
	for _, rn := range s.runners {
		if rn.ScaleSetID == set.ID && rn.Busy {
			s.writeActionsErrorLocked(w, http.StatusBadRequest, excJobStillRunning, "a runner of the set runs a job")
			return
		}
	}
	s.dropSet(set)
	w.WriteHeader(http.StatusNoContent)
}

// setJITConfig answers generatejitconfig: a runner of the set, ephemeral, with
// the set's labels, whose configuration the sim's runner starts from.
func (s *Server) setJITConfig(w http.ResponseWriter, r *http.Request, set *scaleSet) {
	var req struct {
		Name       string `json:"name"`
		WorkFolder string `json:"workFolder"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" {
		s.writeActionsErrorLocked(w, http.StatusBadRequest, excArgument, "name is required")
		return
	}
	for _, rn := range s.runners {
		if rn.Scope == set.Scope && rn.Name == req.Name {
			s.writeActionsErrorLocked(w, http.StatusConflict, excAgentExists, "an agent named "+req.Name+" exists")
			return
		}
	}
	s.nextID++
	rn := &runner{ID: s.nextID, Name: req.Name, Scope: set.Scope, Labels: append([]string{set.Name}, set.Labels...), Ephemeral: true, ScaleSetID: set.ID}
	s.runners[rn.ID] = rn
	credential := newToken()
	s.jitCredentials[credential] = rn.ID
	encoded, _ := json.Marshal(jitConfig{RunnerID: rn.ID, Name: rn.Name, Scope: set.Scope, Credential: credential})
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{
		"runner":           map[string]any{"id": rn.ID, "name": rn.Name, "runnerScaleSetId": set.ID},
		"encodedJITConfig": base64.StdEncoding.EncodeToString(encoded),
	})
}

func (rn *runner) agentJSON() map[string]any {
	status := "offline"
	if rn.Online {
		status = "online"
	}
	return map[string]any{"id": rn.ID, "name": rn.Name, "status": status, "busy": rn.Busy, "runnerScaleSetId": rn.ScaleSetID}
}

func (s *Server) findAgent(w http.ResponseWriter, r *http.Request, scope string) {
	name := r.URL.Query().Get("agentName")
	found := []map[string]any{}
	for _, rn := range s.scopeRunners(scope) {
		if rn.Name == name {
			found = append(found, rn.agentJSON())
		}
	}
	s.writeActionsJSONLocked(w, http.StatusOK, map[string]any{"count": len(found), "value": found})
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request, scope string) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	rn, ok := s.runners[id]
	if !ok || rn.Scope != scope {
		s.writeActionsErrorLocked(w, http.StatusNotFound, excAgentNotFound, fmt.Sprintf("agent %d not found", id))
		return
	}
	s.writeActionsJSONLocked(w, http.StatusOK, rn.agentJSON())
}

// deleteAgent removes a runner: 204 also when it is gone already, 400 while
// it runs a job.
func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request, scope string) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	rn, ok := s.runners[id]
	switch {
	case ok && rn.Scope == scope && rn.Busy:
		s.writeActionsErrorLocked(w, http.StatusBadRequest, excJobStillRunning, "agent "+rn.Name+" is running a job")
	case ok && rn.Scope == scope:
		delete(s.runners, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// dropSet deletes a set: its session ends, its waiting jobs wait for another
// set. Callers hold s.mu.
func (s *Server) dropSet(set *scaleSet) {
	delete(s.actions.sets, set.ID)
	for _, j := range s.jobs {
		if j.set.WantsSet == set.ID && j.Status == "queued" {
			j.set = setJob{}
		}
	}
	s.assignToSets()
	s.actions.wake()
}

// ScaleSets lists the sets, ordered by ID.
func (s *Server) ScaleSets() []ScaleSetInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ScaleSetInfo, 0, len(s.actions.sets))
	for _, set := range s.actions.sets {
		out = append(out, s.info(set))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
