package fakegithub

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// JobInfo is a workflow job as a test sees it.
type JobInfo struct {
	ID    int64 `json:"id"`
	RunID int64 `json:"run_id"`
	// RunAttempt is the attempt of its run the job runs in: 1, or more for a
	// job a re-run created.
	RunAttempt int      `json:"run_attempt"`
	Repo       string   `json:"repo"`
	Name       string   `json:"name"`
	Labels     []string `json:"labels"`
	Status     string   `json:"status"`
	Conclusion string   `json:"conclusion,omitempty"`
	RunnerName string   `json:"runner_name,omitempty"`
	// CreatedAt, StartedAt and CompletedAt are GitHub's timestamps of the job.
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// ScaleSetAssignedAt is when the Actions service last assigned the job
	// to a runner scale set; zero for a job of no set.
	ScaleSetAssignedAt time.Time `json:"scale_set_assigned_at,omitzero"`
}

func (j *job) info() JobInfo {
	return JobInfo{ID: j.ID, RunID: j.RunID, RunAttempt: j.RunAttempt, Repo: j.Repo, Name: j.Name, Labels: j.Labels, Status: j.Status, Conclusion: j.Conclusion, RunnerName: j.RunnerName,
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, CompletedAt: j.CompletedAt, ScaleSetAssignedAt: j.set.AssignedAt}
}

// QueueJob queues a workflow job in a new workflow run of repo (owner/name).
func (s *Server) QueueJob(repo, name string, labels []string) JobInfo {
	s.mu.Lock()
	s.nextID++
	r := &run{ID: s.nextID, Repo: repo, Status: "queued", Attempt: 1, CreatedAt: s.now()}
	s.runs[r.ID] = r
	info := s.newJob(r, name, labels).info()
	s.mu.Unlock()
	s.emit(JobEvent{Action: "queued", Job: info})
	return info
}

// StartJob assigns a queued job to an idle, online runner, which becomes busy.
func (s *Server) StartJob(jobID int64, runnerName string) (JobInfo, error) {
	s.mu.Lock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != "queued" {
		s.mu.Unlock()
		return JobInfo{}, fmt.Errorf("fake github: job %d is not queued", jobID)
	}
	rn, err := s.findRunner(runnerName)
	if err == nil && !rn.canTake(j) {
		err = fmt.Errorf("fake github: runner %s of %s cannot take job %d of %s (busy=%v online=%v labels=%v)",
			runnerName, rn.Scope, j.ID, j.Repo, rn.Busy, rn.Online, j.Labels)
	}
	if err != nil {
		s.mu.Unlock()
		return JobInfo{}, err
	}
	event := s.start(j, rn)
	s.mu.Unlock()
	s.emit(event)
	return event.Job, nil
}

// start hands j to rn. Callers hold s.mu.
func (s *Server) start(j *job, rn *runner) JobEvent {
	rn.Busy, rn.JobID = true, j.ID
	j.Status, j.RunnerName, j.RunnerID, j.StartedAt = "in_progress", rn.Name, rn.ID, s.now()
	s.refresh(s.runs[j.RunID])
	s.setJobStarted(j, rn)
	return JobEvent{Action: "in_progress", Job: j.info(), Runner: rn.info()}
}

// canTake is GitHub's rule for handing a job to a runner: the runner is online
// and idle, its scope covers the job's repository, and it has every label the job
// asks for (case-insensitive; self-hosted, linux and x64 are the runner's defaults).
func (rn *runner) canTake(j *job) bool {
	if rn.Busy || !rn.Online {
		return false
	}
	// A scale set's runner takes only the jobs assigned to its set, and a job
	// that targets a set only a runner of it.
	if rn.ScaleSetID != 0 || j.set.WantsSet != 0 {
		return rn.ScaleSetID != 0 && rn.ScaleSetID == j.set.ScaleSetID
	}
	if strings.HasPrefix(rn.Scope, "repos/") && rn.Scope != "repos/"+j.Repo {
		return false
	}
	if org, ok := strings.CutPrefix(rn.Scope, "orgs/"); ok && !strings.EqualFold(org, strings.Split(j.Repo, "/")[0]) {
		return false
	}
	for _, want := range j.Labels {
		if !rn.hasLabel(want) {
			return false
		}
	}
	return true
}

func (rn *runner) hasLabel(label string) bool {
	for _, builtin := range []string{"self-hosted", "linux", "x64"} {
		if strings.EqualFold(label, builtin) {
			return true
		}
	}
	for _, have := range rn.Labels {
		if strings.EqualFold(have, label) {
			return true
		}
	}
	return false
}

// AssignQueued does what GitHub's job dispatcher does: it hands queued jobs,
// oldest first, to idle online runners that can take them. Which of the fitting
// runners takes a job is random, as on GitHub, so tests cannot rely on an order.
func (s *Server) AssignQueued(rng *rand.Rand) []JobInfo {
	s.mu.Lock()
	var queued []*job
	for _, j := range s.jobs {
		if j.Status == "queued" {
			queued = append(queued, j)
		}
	}
	sort.Slice(queued, func(a, b int) bool { return queued[a].ID < queued[b].ID })
	var idle []*runner
	for _, rn := range s.runners {
		if rn.Online && !rn.Busy {
			idle = append(idle, rn)
		}
	}
	sort.Slice(idle, func(a, b int) bool { return idle[a].ID < idle[b].ID })
	var events []JobEvent
	for _, j := range queued {
		var fits []int
		for i, rn := range idle {
			if rn.canTake(j) {
				fits = append(fits, i)
			}
		}
		if len(fits) == 0 {
			continue
		}
		pick := fits[rng.IntN(len(fits))]
		events = append(events, s.start(j, idle[pick]))
		idle = append(idle[:pick], idle[pick+1:]...)
	}
	s.mu.Unlock()
	s.emit(events...)
	started := make([]JobInfo, len(events))
	for i, e := range events {
		started[i] = e.Job
	}
	return started
}

// CompleteJob ends a running job. Its runner becomes idle; an ephemeral runner is
// removed from GitHub, as the real service does once the job is done. The run
// completes with the last job of its attempt.
func (s *Server) CompleteJob(jobID int64, conclusion string) (JobInfo, error) {
	s.mu.Lock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != "in_progress" {
		s.mu.Unlock()
		return JobInfo{}, fmt.Errorf("fake github: job %d is not in progress", jobID)
	}
	j.Status, j.Conclusion, j.CompletedAt = "completed", conclusion, s.now()
	s.refresh(s.runs[j.RunID])
	event := JobEvent{Action: "completed", Job: j.info()}
	if rn, ok := s.runners[j.RunnerID]; ok {
		rn.Busy, rn.JobID = false, 0
		event.Runner = rn.info()
		if rn.Ephemeral {
			delete(s.runners, rn.ID)
		}
	}
	s.setJobCompleted(j)
	s.mu.Unlock()
	s.emit(event)
	return event.Job, nil
}

// Jobs returns every job, ordered by ID.
func (s *Server) Jobs() []JobInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobInfo, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, j.info())
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Job returns the job with that ID, if there is one.
func (s *Server) Job(id int64) (JobInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return JobInfo{}, false
	}
	return j.info(), true
}

// JobsIn counts the jobs whose status is status (queued, in_progress, completed).
func (s *Server) JobsIn(status string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, j := range s.jobs {
		if j.Status == status {
			n++
		}
	}
	return n
}
