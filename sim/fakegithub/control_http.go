package fakegithub

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// controlRoutes expose the test controls over HTTP under /_fake/, for a fake that
// runs as its own process (the simulator's runners register through them).
func (s *Server) controlRoutes() {
	s.mux.HandleFunc("POST /_fake/register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Token     string   `json:"token"`
			Name      string   `json:"name"`
			Labels    []string `json:"labels"`
			Ephemeral bool     `json:"ephemeral"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		info, err := s.Register(req.Token, req.Name, req.Labels, req.Ephemeral)
		if err != nil {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, info)
	})
	s.mux.HandleFunc("GET /_fake/runners", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Runners())
	})
	s.mux.HandleFunc("POST /_fake/jobs", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Repo   string   `json:"repo"`
			Name   string   `json:"name"`
			Labels []string `json:"labels"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Repo == "" {
			writeError(w, http.StatusBadRequest, "repo is required")
			return
		}
		writeJSON(w, http.StatusCreated, s.QueueJob(req.Repo, req.Name, req.Labels))
	})
	s.mux.HandleFunc("POST /_fake/jobs/{id}/start", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Runner string `json:"runner"`
		}
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		info, err := s.StartJob(id, req.Runner)
		if err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	s.mux.HandleFunc("POST /_fake/jobs/{id}/complete", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Conclusion string `json:"conclusion"`
		}
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		info, err := s.CompleteJob(id, req.Conclusion)
		if err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
}
