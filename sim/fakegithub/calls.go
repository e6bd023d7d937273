package fakegithub

import (
	"net/http"
	"strings"
	"time"
)

// Call is one request the server answered.
type Call struct {
	At     time.Time
	Method string
	// Endpoint is the route pattern, e.g. "DELETE /repos/{owner}/{repo}/actions/runners/{id}".
	Endpoint string
	Path     string
	Status   int
}

func (s *Server) record(r *http.Request, path string, status int) {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/_fake/") {
		return // control calls are not GitHub calls
	}
	s.calls = append(s.calls, Call{At: s.now(), Method: r.Method, Endpoint: r.Pattern, Path: path, Status: status})
}

// Calls returns every GitHub call answered so far, in order.
func (s *Server) Calls() []Call {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallCounts counts calls by endpoint pattern.
func (s *Server) CallCounts() map[string]int {
	counts := map[string]int{}
	for _, c := range s.Calls() {
		counts[c.Endpoint]++
	}
	return counts
}

// ResetCalls forgets the call log.
func (s *Server) ResetCalls() {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	s.calls = nil
}
