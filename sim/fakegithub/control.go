package fakegithub

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// ErrUnknownToken: a runner tried to register with a token GitHub never issued, or
// one that expired.
var ErrUnknownToken = errors.New("fake github: registration token was never issued or has expired")

// RunnerInfo is a registered runner as a test sees it.
type RunnerInfo struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	Labels    []string `json:"labels"`
	Group     string   `json:"group,omitempty"`
	Ephemeral bool     `json:"ephemeral"`
	Online    bool     `json:"online"`
	Busy      bool     `json:"busy"`
}

func (r *runner) info() RunnerInfo {
	return RunnerInfo{ID: r.ID, Name: r.Name, Scope: r.Scope, Labels: r.Labels, Group: r.Group, Ephemeral: r.Ephemeral, Online: r.Online, Busy: r.Busy}
}

// Register does what the runner's config.sh does: it registers a runner with a
// registration token, replacing a runner of the same name in the scope (--replace).
// The runner is online and idle.
func (s *Server) Register(token, name string, labels []string, ephemeral bool) (RunnerInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	issued, ok := s.tokens[token]
	if !ok || !issued.expiresAt.After(s.now()) {
		return RunnerInfo{}, ErrUnknownToken
	}
	for _, existing := range s.scopeRunners(issued.scope) {
		if existing.Name == name {
			if existing.Busy {
				return RunnerInfo{}, fmt.Errorf("fake github: runner %s is busy and cannot be replaced", name)
			}
			delete(s.runners, existing.ID)
		}
	}
	s.nextID++
	rn := &runner{ID: s.nextID, Name: name, Scope: issued.scope, Labels: labels, Ephemeral: ephemeral, Online: true}
	s.runners[rn.ID] = rn
	return rn.info(), nil
}

// StartJIT does what `run.sh --jitconfig` does: the runner that GitHub
// registered with generate-jitconfig comes online. A configuration starts its
// runner once; an unknown or used one is ErrUnknownToken.
func (s *Server) StartJIT(encoded string) (RunnerInfo, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	var config jitConfig
	if err != nil || json.Unmarshal(raw, &config) != nil {
		return RunnerInfo{}, ErrUnknownToken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.jitCredentials[config.Credential]
	rn := s.runners[id]
	if !ok || rn == nil {
		return RunnerInfo{}, ErrUnknownToken
	}
	delete(s.jitCredentials, config.Credential)
	rn.Online = true
	return rn.info(), nil
}

// findRunner looks a runner up by name in any scope. Callers hold s.mu.
func (s *Server) findRunner(name string) (*runner, error) {
	for _, rn := range s.runners {
		if rn.Name == name {
			return rn, nil
		}
	}
	return nil, fmt.Errorf("fake github: no runner named %s", name)
}

// SetOnline marks a runner online or offline (its listener stopped).
func (s *Server) SetOnline(name string, online bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn, err := s.findRunner(name)
	if err != nil {
		return err
	}
	rn.Online = online
	return nil
}

// Runner returns a registered runner by name.
func (s *Server) Runner(name string) (RunnerInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn, err := s.findRunner(name)
	if err != nil {
		return RunnerInfo{}, false
	}
	return rn.info(), true
}

// Runners returns every registered runner, ordered by ID.
func (s *Server) Runners() []RunnerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RunnerInfo
	for _, rn := range s.runners {
		out = append(out, rn.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// IssuedTokens returns every registration token handed out, so a test can prove
// none of them leaked anywhere.
func (s *Server) IssuedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tokens))
	for t := range s.tokens {
		out = append(out, t)
	}
	return out
}
