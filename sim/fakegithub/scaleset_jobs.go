package fakegithub

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// maxAssignments is how often the service assigns a job to a set whose
// runner never took it before it stops trying.
const maxAssignments = 3

// setJob is the scale set side of a workflow job.
type setJob struct {
	// WantsSet is the set the job's labels target (0: none found yet);
	// ScaleSetID the set it is assigned to now (0: none).
	WantsSet, ScaleSetID int64
	Assignments          int
	// Announced: a JobAvailable went out for it (GHES).
	Announced bool
	RequestID int64
	// AssignedAt is when the job was last assigned to a set.
	AssignedAt time.Time
}

// scaleSetJobID is the service's string id of a job; listeners key jobs by it.
func scaleSetJobID(j *job) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", j.RunID, j.ID)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// jobMessage is j as a message of type kind. Callers hold s.mu.
func (s *Server) jobMessage(kind string, j *job) setJobMessage {
	owner, name, _ := strings.Cut(j.Repo, "/")
	m := setJobMessage{
		MessageType: kind, JobID: scaleSetJobID(j), RunnerRequestID: j.set.RequestID, WorkflowRunID: j.RunID,
		RepositoryName: name, OwnerName: owner, JobDisplayName: j.Name, EventName: "push",
		JobWorkflowRef: j.Repo + "/.github/workflows/ci.yaml@refs/heads/main",
		RequestLabels:  j.Labels, QueueTime: stamp(j.CreatedAt),
	}
	if s.actions.opts.RequestIDZero {
		m.RunnerRequestID, m.WorkflowRunID = 0, 0
	}
	return m
}

// assignToSets does what the service does when jobs wait: each queued job goes
// to the scale set its labels target, within the capacity the set's listener
// last sent (on GHES it is announced, to be acquired). Callers hold s.mu.
func (s *Server) assignToSets() {
	a := s.actions
	if len(a.sets) == 0 {
		return
	}
	sets := make([]*scaleSet, 0, len(a.sets))
	for _, set := range a.sets {
		sets = append(sets, set)
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i].ID < sets[j].ID })
	for _, j := range s.sortedJobs() {
		if j.Status != "queued" || j.Superseded || j.set.ScaleSetID != 0 || j.set.Assignments >= maxAssignments {
			continue
		}
		if j.set.WantsSet == 0 {
			for _, set := range sets {
				if set.covers(j.Repo) && set.targetedBy(j.Labels) {
					j.set.WantsSet = set.ID
					s.nextID++
					j.set.RequestID = s.nextID
					break
				}
			}
		}
		set, ok := a.sets[j.set.WantsSet]
		if !ok {
			continue
		}
		if a.opts.GHES {
			if !j.set.Announced {
				j.set.Announced = true
				m := s.jobMessage("JobAvailable", j)
				m.AcquireJobURL = fmt.Sprintf("%sactions-service/_apis/runtime/runnerscalesets/%d/acquirejobs", s.URL, set.ID)
				s.queueMessage(set, m)
			}
			continue
		}
		if set.maxCapacity >= 0 && s.assignedTo(set.ID) >= set.maxCapacity {
			continue
		}
		s.assignJob(j, set)
	}
}

// sortedJobs are the jobs, oldest first. Callers hold s.mu.
func (s *Server) sortedJobs() []*job {
	all := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		all = append(all, j)
	}
	sort.Slice(all, func(x, y int) bool { return all[x].ID < all[y].ID })
	return all
}

// assignJob assigns j to set. Callers hold s.mu.
func (s *Server) assignJob(j *job, set *scaleSet) {
	j.set.ScaleSetID, j.set.AssignedAt = set.ID, s.now()
	j.set.Assignments++
	m := s.jobMessage("JobAssigned", j)
	m.ScaleSetAssignTime = stamp(s.now())
	s.queueMessage(set, m)
}

// queueMessage adds a job message to the set's next message. Callers hold s.mu.
func (s *Server) queueMessage(set *scaleSet, m setJobMessage) {
	set.pending = append(set.pending, m)
	s.actions.wake()
}

// assignedTo counts the jobs assigned to a set and not completed. Callers
// hold s.mu.
func (s *Server) assignedTo(setID int64) int {
	n := 0
	for _, j := range s.jobs {
		if j.set.ScaleSetID == setID && j.Status != "completed" {
			n++
		}
	}
	return n
}

// statistics are a set's numbers now, or the frozen ones of the stale mode.
// Callers hold s.mu.
func (s *Server) statistics(set *scaleSet) ScaleSetStatistics {
	if s.actions.staleStatistics != nil {
		return *s.actions.staleStatistics
	}
	var st ScaleSetStatistics
	for _, j := range s.jobs {
		switch {
		case j.set.ScaleSetID == set.ID && j.Status == "queued":
			st.TotalAssignedJobs++
			if s.actions.opts.GHES {
				st.TotalAcquiredJobs++
			}
		case j.set.ScaleSetID == set.ID && j.Status == "in_progress":
			st.TotalAssignedJobs++
			st.TotalRunningJobs++
		case j.set.WantsSet == set.ID && j.set.ScaleSetID == 0 && j.set.Announced && j.Status == "queued":
			st.TotalAvailableJobs++
		}
	}
	for _, rn := range s.runners {
		if rn.ScaleSetID != set.ID || !rn.Online {
			continue
		}
		st.TotalRegisteredRunners++
		if rn.Busy {
			st.TotalBusyRunners++
		} else {
			st.TotalIdleRunners++
		}
	}
	return st
}

// setJobStarted and setJobCompleted tell a job's set that its runner started
// or finished it. Callers hold s.mu.
func (s *Server) setJobStarted(j *job, rn *runner) {
	set, ok := s.actions.sets[j.set.ScaleSetID]
	if !ok {
		return
	}
	m := s.jobMessage("JobStarted", j)
	m.RunnerID, m.RunnerName, m.RunnerAssignTime = rn.ID, rn.Name, stamp(j.StartedAt)
	s.queueMessage(set, m)
}

func (s *Server) setJobCompleted(j *job) {
	set, ok := s.actions.sets[j.set.ScaleSetID]
	if !ok {
		return
	}
	m := s.jobMessage("JobCompleted", j)
	m.RunnerID, m.RunnerName, m.FinishTime = j.RunnerID, j.RunnerName, stamp(j.CompletedAt)
	m.RunnerAssignTime = stamp(j.StartedAt) // every job message carries the times it has
	m.Result = map[string]string{"success": "succeeded", "failure": "failed", "cancelled": "canceled"}[j.Conclusion]
	if m.Result == "" {
		m.Result = j.Conclusion
	}
	s.queueMessage(set, m)
	s.assignToSets() // capacity freed
}

// Withdraw does what the service does to a job assigned to a set whose runner
// never took it: a JobCompleted with result canceled and no runner, then, at
// most three assignments in all, the job is assigned again.
func (s *Server) Withdraw(jobID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != "queued" || j.set.ScaleSetID == 0 {
		return fmt.Errorf("fake github: job %d is not assigned to a scale set and waiting", jobID)
	}
	set := s.actions.sets[j.set.ScaleSetID]
	m := s.jobMessage("JobCompleted", j)
	m.Result = "canceled"
	j.set.ScaleSetID = 0
	if set != nil {
		s.queueMessage(set, m)
	}
	s.assignToSets()
	return nil
}
