package replaytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// actionsService is the fake Actions service the listeners of the scenarios
// poll, with the client the worker's activities use.
type actionsService struct {
	fake   *fakegithub.Server
	client *scaleset.Client
}

var actions *actionsService

func startActions() (*actionsService, error) {
	fake, err := fakegithub.New(fakegithub.Options{Actions: fakegithub.ActionsOptions{PollHold: 300 * time.Millisecond}})
	if err != nil {
		return nil, err
	}
	gh, err := github.New(github.Config{Token: "ghp_replay", URL: fake.URL}, github.Options{})
	if err != nil {
		return nil, fmt.Errorf("github client: %w (and close: %v)", err, fake.Close())
	}
	return &actionsService{fake: fake, client: scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/"})}, nil
}

func (a *actionsService) clients(context.Context, github.Scope) (*scaleset.Client, error) {
	return a.client, nil
}

func (a *actionsService) stop() { _ = a.fake.Close() }

// setNamed is the fake's set of that name, if there is one.
func (a *actionsService) setNamed(name string) (fakegithub.ScaleSetInfo, bool) {
	for _, s := range a.fake.ScaleSets() {
		if s.Name == name {
			return s, true
		}
	}
	return fakegithub.ScaleSetInfo{}, false
}

// A scale set's listener on the compact server: it creates the set, opens a
// session, records a job's assignment, start and end and passes the level and
// the runner's start and end to the autoscaler; the service deletes the set
// and the listener makes it again with a new id and a new cursor; it continues
// as new with its cursor, session and open jobs; a delete closes the session.
func TestRecordScaleSetHistories(t *testing.T) {
	needServers(t)
	t.Run("scaleset-demand", func(t *testing.T) {
		r := newRecorder(t, compact, "scaleset-demand")
		const name = "replay-set"
		scope := registry.Scope{Organization: "octo-org"}
		hra := r.startAutoscaled(contract.AutoscalerSpec{
			Namespace: ns, Name: "scaleset-demand", Generation: 1, TargetKind: "RunnerDeployment", TargetName: "scaleset-demand",
			Min: 0, Max: 5, ScaleDownDelay: time.Second, Scope: scope, ScaleSet: name,
		})
		id := contract.ScaleSetWorkflowID(ns, "RunnerDeployment", "scaleset-demand")
		spec := workflows.ScaleSetSpec{Namespace: ns, Kind: "RunnerDeployment", Pool: "scaleset-demand", Scope: scope,
			Name: name, Labels: []string{name}, MaxRunners: 5, Autoscaler: hra.hra}
		first := r.start(id, workflows.ScaleSetWorkflow, workflows.ScaleSetInput{Spec: spec})
		r.poll("the listener holds a session", func() (bool, string) {
			set, ok := actions.setNamed(name)
			return ok && set.Session != "", fmt.Sprintf("%+v", set)
		})
		set, _ := actions.setNamed(name)

		job := actions.fake.QueueJob("octo-org/app", "build", []string{name})
		config, err := actions.client.GenerateJITConfig(r.ctx, scope, set.ID, "scaleset-demand-a", "")
		if err != nil {
			t.Fatalf("jit config: %v", err)
		}
		if _, err := actions.fake.StartJIT(config.Encoded()); err != nil {
			t.Fatalf("start jit: %v", err)
		}
		if _, err := actions.fake.StartJob(job.ID, "scaleset-demand-a"); err != nil {
			t.Fatalf("start job: %v", err)
		}
		if _, err := actions.fake.CompleteJob(job.ID, "success"); err != nil {
			t.Fatalf("complete job: %v", err)
		}
		waitState(r, id, "the job's end recorded", func(s workflows.ScaleSetState) bool {
			return s.Messages > 0 && len(s.Jobs) == 0 && s.Statistics.Assigned == 0 && s.LastMessageID > 0
		})

		if err := actions.fake.DeleteScaleSet(set.ID); err != nil {
			t.Fatalf("delete set: %v", err)
		}
		again := waitState(r, id, "the set made again", func(s workflows.ScaleSetState) bool {
			return s.ScaleSetID != 0 && s.ScaleSetID != set.ID && s.SessionID != ""
		})
		waiting := actions.fake.QueueJob("octo-org/app", "test", []string{name})
		waitState(r, id, "the waiting job recorded on the new set", func(s workflows.ScaleSetState) bool {
			return len(s.Jobs) == 1
		})
		r.waitContinued(id, first)
		st := waitState(r, id, "the next run carries the state", func(s workflows.ScaleSetState) bool { return s.SessionID != "" })
		if st.ScaleSetID != again.ScaleSetID || len(st.Jobs) != 1 || st.LastMessageID == 0 {
			t.Fatalf("after continue-as-new: set %d, jobs %v, cursor %d; want set %d, one open job, a cursor", st.ScaleSetID, st.Jobs, st.LastMessageID, again.ScaleSetID)
		}
		r.signal(id, contract.SignalDelete, nil)
		r.waitDone(id, nil)
		if s, _ := actions.setNamed(name); s.Session != "" {
			t.Fatalf("the session stayed open after delete: %+v", s)
		}
		if _, ok := actions.fake.Job(waiting.ID); !ok {
			t.Fatalf("job %d unknown to the fake", waiting.ID)
		}
		r.export("-listener", id, first)
		hra.finish() // exports the autoscaler and the pool

	})

	// A job that failed on a scale set's runner goes to the pool to be found
	// by its runner's name (scaleset-lost-jobs): the set named no run.
	t.Run("autoscaler-scaleset-lost-job", func(t *testing.T) {
		r := newRecorder(t, plain, "autoscaler-scaleset-lost-job")
		a := r.scaleSetJobRun("autoscaler-scaleset-lost-job", "lost-job-set", 3, contract.JobEvent{JobID: contract.ScaleSetJobKey("job-a"),
			RunnerName: "lost-job-runner", RunnerID: 31, QueuedAt: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}, "failure")
		waitState(r, a.hra, "the failed job sent to the pool", func(s workflows.AutoscalerState) bool {
			return s.ScaleSet != nil && s.ScaleSet.MessageID == 2 && len(s.Failed) == 0 && s.Sent != nil && s.Sent.Replicas == 0
		})
		a.finish()
	})

	// A scale set's autoscaler says it names finished runners from the first
	// message on (scaleset-names-finished), so its pool counts an ended
	// runner until the request naming it comes.
	t.Run("autoscaler-scaleset-names-finished", func(t *testing.T) {
		r := newRecorder(t, plain, "autoscaler-scaleset-names-finished")
		a := r.scaleSetJobRun("autoscaler-scaleset-names-finished", "names-finished-set", 5, contract.JobEvent{JobID: contract.ScaleSetJobKey("job-n"),
			RunnerName: "names-finished-runner", RunnerID: 41}, "success")
		waitState(r, a.hra, "the finished runner named to the pool", func(s workflows.AutoscalerState) bool {
			return s.ScaleSet != nil && s.ScaleSet.MessageID == 2 && s.Sent != nil && s.Sent.NamesFinished && s.Sent.Replicas == 0 && len(s.Finished) == 0
		})
		a.finish()
	})

	// A scale set's newly assigned jobs are arrivals for an auto buffer
	// (scaleset-arrivals).
	t.Run("autoscaler-scaleset-arrivals", func(t *testing.T) {
		r := newRecorder(t, plain, "autoscaler-scaleset-arrivals")
		a := r.startAutoscaled(contract.AutoscalerSpec{
			Namespace: ns, Name: "autoscaler-scaleset-arrivals", Generation: 1, TargetKind: "RunnerDeployment", TargetName: "autoscaler-scaleset-arrivals",
			Min: 0, Max: 5, ScaleDownDelay: time.Second, Scope: registry.Scope{Organization: "octo-org"}, ScaleSet: "arrivals-set",
			AutoIdle: &contract.AutoIdleRunners{},
		})
		for i := range 3 {
			r.signal(a.hra, contract.SignalScaleSet, contract.ScaleSetMessage{ScaleSetID: 4, MessageID: int64(i + 1), Assigned: i + 1, Events: []contract.JobEvent{
				{JobID: contract.ScaleSetJobKey(fmt.Sprintf("arrival-%d", i)), Action: "queued", Repository: "octo-org/app", ScaleSetJob: true},
			}})
		}
		waitState(r, a.hra, "three arrivals counted", func(s workflows.AutoscalerState) bool {
			return s.ScaleSet != nil && s.ScaleSet.MessageID == 3 && s.Warm.Arrivals.Count >= 2.5
		})
		a.finish()
	})

	// A rename while a poll runs: the listener closes the old set's session,
	// abandons the poll, and finds or makes the new set, whose queue starts
	// over (scaleset-polls-left-behind).
	t.Run("scaleset-rename", func(t *testing.T) {
		l := startListener(t, "scaleset-rename", "rename-old")
		r, id := l.r, l.id
		old := waitState(r, id, "the old set's session", func(s workflows.ScaleSetState) bool { return s.SessionID != "" && s.Polls > 0 })
		renamedSpec := l.spec
		renamedSpec.Name, renamedSpec.Labels, renamedSpec.Generation = "rename-new", []string{"rename-new"}, 2
		r.signal(id, contract.SignalSpec, renamedSpec)
		renamed := waitState(r, id, "the new set's session", func(s workflows.ScaleSetState) bool {
			return s.ScaleSetID != 0 && s.ScaleSetID != old.ScaleSetID && s.SessionID != ""
		})
		if renamed.LastMessageID != 0 {
			t.Fatalf("the new set's cursor is %d; want its queue from the start", renamed.LastMessageID)
		}
		if s, _ := actions.setNamed("rename-old"); s.Session != "" {
			t.Fatalf("the old set's session stayed open: %+v", s)
		}
		l.finish()
	})

	// `arcflow drain` holds a listener (its session closed, nothing polled),
	// then --undo resumes it.
	t.Run("scaleset-hold", func(t *testing.T) {
		l := startListener(t, "scaleset-hold", "hold-set")
		r, id := l.r, l.id
		waitState(r, id, "a session", func(s workflows.ScaleSetState) bool { return s.SessionID != "" && s.Polls > 0 })
		r.signal(id, contract.SignalHold, contract.Hold{Held: true})
		waitState(r, id, "held, no session", func(s workflows.ScaleSetState) bool { return s.Held && s.SessionID == "" })
		if s, _ := actions.setNamed("hold-set"); s.Session != "" {
			t.Fatalf("a held listener's session stayed open: %+v", s)
		}
		r.signal(id, contract.SignalHold, contract.Hold{Held: false})
		waitState(r, id, "a session again", func(s workflows.ScaleSetState) bool { return !s.Held && s.SessionID != "" })
		l.finish()
	})

	// A listener started on the runners' queue, as before the control queue
	// existed, continues as new on the control queue (control-task-queue).
	t.Run("scaleset-control-queue", func(t *testing.T) {
		l := startListener(t, "scaleset-control-queue", "control-queue-set")
		r, id := l.r, l.id
		waitState(r, id, "a session", func(s workflows.ScaleSetState) bool { return s.SessionID != "" })
		// Holds and resumes fill the history until the compact server
		// suggests continue-as-new.
		for i := 0; !r.continued(id, l.first) && i < 100; i++ {
			r.signal(id, contract.SignalHold, contract.Hold{Held: i%2 == 0})
		}
		r.waitContinued(id, l.first)
		desc, err := r.c.DescribeWorkflowExecution(r.ctx, id, "")
		if err != nil {
			t.Fatalf("describe: %v", err)
		}
		if q := desc.GetExecutionConfig().GetTaskQueue().GetName(); q != contract.ControlTaskQueue {
			t.Fatalf("the next run is on %q; want %q", q, contract.ControlTaskQueue)
		}
		// The last signal before continue-as-new may have been a hold.
		r.signal(id, contract.SignalHold, contract.Hold{Held: false})
		waitState(r, id, "a session on the control queue", func(s workflows.ScaleSetState) bool { return s.SessionID != "" })
		l.finish()
	})
}

// recordedListener is a listener of a scenario of its own, with no pool or
// autoscaler, recorded on the compact server.
type recordedListener struct {
	r         *recorder
	id, first string
	spec      workflows.ScaleSetSpec
}

// startListener starts the listener of scenario's pool for the set setName.
func startListener(t *testing.T, scenario, setName string) *recordedListener {
	r := newRecorder(t, compact, scenario)
	id := contract.ScaleSetWorkflowID(ns, "RunnerDeployment", scenario)
	spec := workflows.ScaleSetSpec{Namespace: ns, Kind: "RunnerDeployment", Pool: scenario, Scope: registry.Scope{Organization: "octo-org"},
		Name: setName, Labels: []string{setName}, MaxRunners: 5, Generation: 1}
	return &recordedListener{r: r, id: id, first: r.start(id, workflows.ScaleSetWorkflow, workflows.ScaleSetInput{Spec: spec}), spec: spec}
}

// finish deletes the listener, exports its runs and replays them.
func (l *recordedListener) finish() {
	l.r.signal(l.id, contract.SignalDelete, nil)
	l.r.waitDone(l.id, nil)
	l.r.export("-listener", l.id, l.first)
	l.r.finish()
}

// scaleSetJobRun starts an autoscaler of scale set setID, named name, with
// its pool, and plays one job of its set through it: the job's start while
// the set's level is 1, then its completion with conclusion at level 0.
func (r *recorder) scaleSetJobRun(name, set string, setID int64, job contract.JobEvent, conclusion string) *autoscaled {
	a := r.startAutoscaled(contract.AutoscalerSpec{
		Namespace: ns, Name: name, Generation: 1, TargetKind: "RunnerDeployment", TargetName: name,
		Min: 0, Max: 5, ScaleDownDelay: time.Second, Scope: registry.Scope{Organization: "octo-org"}, ScaleSet: set,
	})
	job.Repository, job.JobName, job.ScaleSetJob = "octo-org/app", "build", true
	started, completed := job, job
	started.Action = "in_progress"
	completed.Action, completed.Conclusion = "completed", conclusion
	r.signal(a.hra, contract.SignalScaleSet, contract.ScaleSetMessage{ScaleSetID: setID, MessageID: 1, Assigned: 1, Events: []contract.JobEvent{started}})
	a.sent(1, 0)
	r.signal(a.hra, contract.SignalScaleSet, contract.ScaleSetMessage{ScaleSetID: setID, MessageID: 2, Assigned: 0, Events: []contract.JobEvent{completed}})
	return a
}
