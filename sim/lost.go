package sim

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
)

// Causes of a LostJob. They are the values arcflow's own loss causes use, so a
// test can compare what it did with what arcflow saw.
const (
	LossNodeLost  = "node-lost"
	LossEvicted   = "evicted"
	LossOOMKilled = "oom-killed"
)

// LostJob is a job whose runner infrastructure took away: an expected loss,
// unlike a violation.
type LostJob struct {
	JobID  int64
	Runner string
	Pod    string // namespace/name
	Node   string
	Cause  string // LossNodeLost, LossEvicted or LossOOMKilled
	At     time.Time
}

// loss is what infrastructure did, or is about to do, to a runner pod.
type loss struct {
	cause string
	dead  bool // the runner process died
}

// Lost lists the jobs infrastructure took from their runners, in order.
func (r *Runners) Lost() []LostJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]LostJob(nil), r.lost...)
}

// NodeOf is the node (spec.nodeName) of a live runner's pod, or "".
func (r *Runners) NodeOf(runnerName string) string {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.pods[runnerName]; rec != nil {
		return rec.Node
	}
	return ""
}

// plays reports whether pod is a runner pod these Runners play.
func (r *Runners) plays(pod *corev1.Pod) bool {
	_, runner := pod.Labels[activities.LabelRunner]
	return runner && (r.Namespace == "" || pod.Namespace == r.Namespace)
}

// expect records that infrastructure is about to take pod, before the call
// that does it: the pod's deletion may reach the watch before the call returns.
func (r *Runners) expect(pod *corev1.Pod, cause string) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.losses[string(pod.UID)] == nil {
		r.losses[string(pod.UID)] = &loss{cause: cause}
	}
}

// unexpect forgets an expected loss that did not happen (the call failed).
func (r *Runners) unexpect(pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.losses[string(pod.UID)]; l != nil && !l.dead {
		delete(r.losses, string(pod.UID))
	}
}

// die: the runner process of pod dies with what infrastructure did to it. It
// never finishes its job; GitHub takes the runner offline and, LostJobDelay
// later, fails the job. Dying twice changes nothing.
func (r *Runners) die(pod *corev1.Pod, cause string) {
	r.init()
	uid, name := string(pod.UID), runnerEnv(pod)["RUNNER_NAME"].Value
	r.mu.Lock()
	l := r.losses[uid]
	if l == nil {
		l = &loss{cause: cause}
		r.losses[uid] = l
	}
	if l.dead || name == "" {
		l.dead = true
		r.mu.Unlock()
		return
	}
	l.dead = true
	rec := r.pods[name]
	if rec != nil && rec.UID != uid {
		r.mu.Unlock()
		return // the name is another pod's runner now
	}
	delete(r.pods, name)
	r.mu.Unlock()
	if r.GitHub.SetOnline(name, false) != nil {
		return // it never registered
	}
	for _, job := range r.GitHub.Jobs() {
		if job.RunnerName != name || job.Status != "in_progress" {
			continue
		}
		r.mu.Lock()
		r.lostJobs[job.ID] = true
		r.lost = append(r.lost, LostJob{JobID: job.ID, Runner: name, Pod: pod.Namespace + "/" + pod.Name,
			Node: pod.Spec.NodeName, Cause: l.cause, At: time.Now()})
		r.mu.Unlock()
		r.failLost(job.ID)
	}
}

// failLost fails a job whose runner vanished, LostJobDelay from now, as GitHub
// does once it misses the runner.
func (r *Runners) failLost(jobID int64) {
	fail := func() {
		if _, err := r.GitHub.CompleteJob(jobID, "failure"); err == nil {
			r.poke()
		}
	}
	if r.LostJobDelay <= 0 {
		fail()
		return
	}
	time.AfterFunc(r.LostJobDelay, fail)
}
