package fake

import (
	"errors"
	"fmt"
	"sort"
	"strings"
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
	Ephemeral bool     `json:"ephemeral"`
	Online    bool     `json:"online"`
	Busy      bool     `json:"busy"`
}

func (r *runner) info() RunnerInfo {
	return RunnerInfo{ID: r.ID, Name: r.Name, Scope: r.Scope, Labels: r.Labels, Ephemeral: r.Ephemeral, Online: r.Online, Busy: r.Busy}
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

// JobInfo is a workflow job as a test sees it.
type JobInfo struct {
	ID         int64    `json:"id"`
	RunID      int64    `json:"run_id"`
	Repo       string   `json:"repo"`
	Labels     []string `json:"labels"`
	Status     string   `json:"status"`
	Conclusion string   `json:"conclusion,omitempty"`
	RunnerName string   `json:"runner_name,omitempty"`
}

func (j *job) info() JobInfo {
	return JobInfo{ID: j.ID, RunID: j.RunID, Repo: j.Repo, Labels: j.Labels, Status: j.Status, Conclusion: j.Conclusion, RunnerName: j.RunnerName}
}

// QueueJob queues a workflow job in a new workflow run of repo (owner/name).
func (s *Server) QueueJob(repo, name string, labels []string) JobInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	r := &run{ID: s.nextID, Repo: repo, Status: "queued"}
	s.runs[r.ID] = r
	s.nextID++
	j := &job{ID: s.nextID, RunID: r.ID, Repo: repo, Name: name, Labels: labels, Status: "queued", CreatedAt: s.now()}
	s.jobs[j.ID] = j
	return j.info()
}

// StartJob assigns a queued job to an idle, online runner, which becomes busy.
func (s *Server) StartJob(jobID int64, runnerName string) (JobInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != "queued" {
		return JobInfo{}, fmt.Errorf("fake github: job %d is not queued", jobID)
	}
	rn, err := s.findRunner(runnerName)
	if err != nil {
		return JobInfo{}, err
	}
	if rn.Busy || !rn.Online {
		return JobInfo{}, fmt.Errorf("fake github: runner %s cannot take a job (busy=%v online=%v)", runnerName, rn.Busy, rn.Online)
	}
	if !strings.HasPrefix(rn.Scope, "repos/") || rn.Scope == "repos/"+j.Repo {
		rn.Busy, rn.JobID = true, j.ID
		j.Status, j.RunnerName, j.RunnerID, j.StartedAt = "in_progress", rn.Name, rn.ID, s.now()
		s.runs[j.RunID].Status = "in_progress"
		return j.info(), nil
	}
	return JobInfo{}, fmt.Errorf("fake github: runner %s of %s cannot run a job of %s", runnerName, rn.Scope, j.Repo)
}

// CompleteJob ends a running job. Its runner becomes idle; an ephemeral runner is
// removed from GitHub, as the real service does once the job is done.
func (s *Server) CompleteJob(jobID int64, conclusion string) (JobInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != "in_progress" {
		return JobInfo{}, fmt.Errorf("fake github: job %d is not in progress", jobID)
	}
	j.Status, j.Conclusion = "completed", conclusion
	s.runs[j.RunID].Status = "completed"
	if rn, ok := s.runners[j.RunnerID]; ok {
		rn.Busy, rn.JobID = false, 0
		if rn.Ephemeral {
			delete(s.runners, rn.ID)
		}
	}
	return j.info(), nil
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
