package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// Runners plays the runner inside every runner pod, and GitHub's job dispatcher:
//   - a Running pod registers under its RUNNER_NAME with the credential from its
//     Secret, RegisterDelay later, as its image's entrypoint would (Entrypoint):
//     one that cannot start its runner ends Failed at once, never registered;
//   - queued jobs go to idle runners that fit them (fakegithub.Server.AssignQueued);
//   - a job runs for JobDuration, then completes; an ephemeral runner then exits,
//     so its pod ends Succeeded;
//   - a pod deleted while its runner is busy interrupts the job. That must never
//     happen, so it is recorded as a violation;
//   - infrastructure can take a runner too (LoseNode, EvictPod, OOMKill): that
//     is expected, so its job is recorded as lost (Lost), not as a violation.
type Runners struct {
	Kube   kubernetes.Interface
	GitHub *fakegithub.Server
	Log    *slog.Logger
	// Namespace limits the runners to one namespace; empty means all.
	Namespace string
	// RegisterDelay is the time from pod Running to registration (default 1 s).
	RegisterDelay time.Duration
	// JobDuration says how long a job runs (default 5 s for every job).
	JobDuration func(fakegithub.JobInfo) time.Duration
	// JobConclusion says how a job ends (default "success" for every job):
	// "failure" is a job whose step exited 1. Either way the runner finishes
	// the job normally, so an ephemeral one then exits 0.
	JobConclusion func(fakegithub.JobInfo) string
	// LostJobDelay is how long GitHub takes to fail the job of a runner that
	// vanished (default 0: at once). The real service notices a lost runner
	// only after some minutes without its heartbeat.
	LostJobDelay time.Duration
	// JobHold, when set, may hold a job: a job it returns a channel for runs
	// until that channel is closed and then its JobDuration, so a test can
	// keep jobs busy across steps whose length it does not know.
	JobHold func(fakegithub.JobInfo) <-chan struct{}
	// ExitDelay is how long an ephemeral runner takes to exit after its job
	// completed (default 0): a real one cleans up and reports first, so its
	// pod outlives the job's completed delivery by a few seconds.
	ExitDelay time.Duration
	// Seed makes the dispatcher's choices repeatable.
	Seed uint64
	// ManualJobs leaves job assignment to the caller (fakegithub.Server.StartJob), for
	// tests that must choose which runner is busy.
	ManualJobs bool

	mu         sync.Mutex
	pods       map[string]*podRecord // by runner name
	registered map[string]bool       // by pod UID
	times      map[string]*PodTimes  // by pod UID, kept after the pod is gone
	violations []string
	interrupts int
	// losses: pod UID -> the loss infrastructure brought upon the pod, set
	// before the Kubernetes call that causes it, so its deletion, seen on the
	// watch, is no violation.
	losses map[string]*loss
	// lostJobs: jobs whose runner died under them; they never finish.
	lostJobs map[int64]bool
	lost     []LostJob
	// volumeStarts counts runners that started with claims; onUsedVolumes those
	// whose claims an earlier runner had written to.
	volumeStarts, onUsedVolumes int
	kick                        chan struct{}
}

type podRecord struct {
	Namespace, Name, UID string
	Node                 string // spec.nodeName, once scheduled
	Ephemeral            bool
}

// PodTimes says when a runner pod was first seen and first seen Running.
type PodTimes struct {
	Name           string
	Created, Ready time.Time
}

// Run plays the runners until ctx ends.
func (r *Runners) Run(ctx context.Context) error {
	r.init()
	factory := informers.NewSharedInformerFactoryWithOptions(r.Kube, 0, informers.WithNamespace(r.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = activities.LabelRunner }))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.observe(ctx, obj) },
		UpdateFunc: func(_, obj any) { r.observe(ctx, obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				r.podGone(pod)
			}
		},
	}); err != nil {
		return fmt.Errorf("sim runners: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return errors.New("sim runners: pod cache did not sync")
	}
	if r.ManualJobs {
		<-ctx.Done()
	} else {
		r.dispatch(ctx)
	}
	factory.Shutdown()
	return nil
}

func (r *Runners) init() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kick != nil {
		return
	}
	r.pods, r.registered, r.times = map[string]*podRecord{}, map[string]bool{}, map[string]*PodTimes{}
	r.losses, r.lostJobs = map[string]*loss{}, map[int64]bool{}
	r.kick = make(chan struct{}, 1)
	if r.RegisterDelay == 0 {
		r.RegisterDelay = time.Second
	}
	if r.JobDuration == nil {
		r.JobDuration = func(fakegithub.JobInfo) time.Duration { return 5 * time.Second }
	}
	if r.JobConclusion == nil {
		r.JobConclusion = func(fakegithub.JobInfo) string { return "success" }
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
}

// Notice tells the dispatcher that something changed in GitHub (a job queued), so
// it hands out jobs now rather than on its next tick.
func (r *Runners) Notice(fakegithub.JobEvent) { r.poke() }

func (r *Runners) poke() {
	r.init()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// dispatch hands queued jobs to idle runners whenever something changes, and once
// a second in any case, as GitHub's own dispatcher would.
func (r *Runners) dispatch(ctx context.Context) {
	rng := rand.New(rand.NewPCG(r.Seed, r.Seed^0x5eed))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		case <-tick.C:
		}
		for _, job := range r.GitHub.AssignQueued(rng) {
			r.run(ctx, job)
		}
	}
}

// run finishes a job after its hold, if any, and its duration.
func (r *Runners) run(ctx context.Context, job fakegithub.JobInfo) {
	duration := r.JobDuration(job)
	var hold <-chan struct{}
	if r.JobHold != nil {
		hold = r.JobHold(job)
	}
	if hold == nil {
		time.AfterFunc(duration, func() { r.finish(ctx, job) })
		return
	}
	go func() {
		select {
		case <-hold:
			time.AfterFunc(duration, func() { r.finish(ctx, job) })
		case <-ctx.Done():
		}
	}()
}

// finish completes a job, as JobConclusion says; an ephemeral runner then
// exits and its pod ends. A runner that died under its job finishes nothing.
func (r *Runners) finish(ctx context.Context, job fakegithub.JobInfo) {
	r.mu.Lock()
	lost := r.lostJobs[job.ID]
	r.mu.Unlock()
	if ctx.Err() != nil || lost {
		return
	}
	if _, err := r.GitHub.CompleteJob(job.ID, r.JobConclusion(job)); err != nil {
		return // interrupted: the runner's pod went away first
	}
	r.mu.Lock()
	pod := r.pods[job.RunnerName]
	r.mu.Unlock()
	if pod != nil && pod.Ephemeral {
		exit := func() {
			if ctx.Err() != nil {
				return
			}
			if err := exitRunner(ctx, r.Kube, pod.Namespace, pod.Name); err != nil {
				r.Log.Warn("simulated runner could not exit", "runner", job.RunnerName, "error", err)
			}
			r.poke()
		}
		if r.ExitDelay > 0 {
			time.AfterFunc(r.ExitDelay, exit)
			r.poke()
			return
		}
		exit()
		return
	}
	r.poke()
}

// CrashAtStartEnv set to "true" in a runner container's environment (a
// RunnerDeployment template's env) makes the simulated runner crash at start,
// as a broken runner image does.
const CrashAtStartEnv = "ARCFLOW_SIM_CRASH_AT_START"

func (r *Runners) observe(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if pod.DeletionTimestamp != nil {
		r.podGone(pod)
		return
	}
	env := runnerEnv(pod)
	name := env["RUNNER_NAME"].Value
	if name == "" {
		return
	}
	now := time.Now()
	r.mu.Lock()
	if l := r.losses[string(pod.UID)]; l != nil && l.dead {
		r.mu.Unlock()
		return // its runner died; a later change of the pod revives nothing
	}
	rec := r.pods[name]
	if rec == nil || rec.UID != string(pod.UID) {
		rec = &podRecord{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Ephemeral: env["RUNNER_EPHEMERAL"].Value != "false"}
		r.pods[name] = rec
		if r.times[rec.UID] == nil {
			r.times[rec.UID] = &PodTimes{Name: pod.Name, Created: now}
		}
	}
	rec.Node = pod.Spec.NodeName
	running := pod.Status.Phase == corev1.PodRunning && !r.registered[rec.UID]
	if running {
		r.times[rec.UID].Ready = now
		r.registered[rec.UID] = true
	}
	r.mu.Unlock()
	if !running {
		return
	}
	c := runnerContainer(pod)
	start := Entrypoint(c.Image, c.Command, c.Args, env)
	if env[CrashAtStartEnv].Value == "true" || start == ExitAtStart || start == NotCreated {
		// A runner image that crashes at start, or whose entrypoint cannot
		// start this pod's runner: the pod ends Failed, never registered.
		go r.crash(ctx, pod, name, "exit at start")
		return
	}
	time.AfterFunc(r.RegisterDelay, func() {
		if !r.podLive(name, string(pod.UID)) {
			return // the process died with its pod before config.sh ran
		}
		err := r.register(ctx, pod, env, start)
		switch {
		case errors.Is(err, errNoCredential):
			r.crash(ctx, pod, name, err.Error())
		case err != nil && ctx.Err() == nil:
			r.Log.Warn("simulated runner could not register", "runner", name, "error", err)
		}
		r.poke()
	})
}

// podExists asks the API server whether the pod is still there: a process
// cannot register once its pod is gone, however late this simulator's watch
// is to say so. A registration made after that would stay behind, offline,
// whatever arcflow does.
func (r *Runners) podExists(ctx context.Context, pod *corev1.Pod) bool {
	now, err := r.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	return err == nil && now.UID == pod.UID
}

// podLive reports whether the runner's pod of this UID is still there.
func (r *Runners) podLive(name, uid string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.pods[name]
	return rec != nil && rec.UID == uid
}

// podGone: the runner process dies with its pod. A runner that was running a job
// loses it; GitHub fails the job and takes the runner offline. Infrastructure
// the test set on the pod makes that an expected loss, anything else a violation.
func (r *Runners) podGone(pod *corev1.Pod) {
	name := runnerEnv(pod)["RUNNER_NAME"].Value
	r.mu.Lock()
	if l := r.losses[string(pod.UID)]; l != nil {
		r.mu.Unlock()
		r.die(pod, l.cause)
		return
	}
	rec := r.pods[name]
	if rec == nil || rec.UID != string(pod.UID) {
		r.mu.Unlock()
		return
	}
	delete(r.pods, name)
	r.mu.Unlock()
	info, ok := r.GitHub.Runner(name)
	if !ok {
		return
	}
	_ = r.GitHub.SetOnline(name, false)
	if !info.Busy {
		return
	}
	for _, job := range r.GitHub.Jobs() {
		if job.RunnerName == name && job.Status == "in_progress" {
			_, _ = r.GitHub.CompleteJob(job.ID, "failure")
			r.mu.Lock()
			r.interrupts++
			r.violations = append(r.violations, fmt.Sprintf("pod %s/%s deleted while its runner ran job %d", pod.Namespace, pod.Name, job.ID))
			r.mu.Unlock()
		}
	}
}

// PodTimes lists every runner pod seen, in the order they were created.
func (r *Runners) PodTimes() []PodTimes {
	r.mu.Lock()
	out := make([]PodTimes, 0, len(r.times))
	for _, t := range r.times {
		out = append(out, *t)
	}
	r.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].Created.Before(out[b].Created) })
	return out
}

// Violations lists every pod deleted while its runner was busy.
func (r *Runners) Violations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.violations...)
}

// Interrupted counts jobs lost because their runner's pod went away unexpectedly
// (the violations); jobs infrastructure took are in Lost.
func (r *Runners) Interrupted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.interrupts
}

// LivePods counts the runner pods that exist now (not being deleted).
func (r *Runners) LivePods() int {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pods)
}
