package workflows

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Jobs lost to infrastructure. A job is lost when its runner was taken away
// while it ran: two facts that come apart. The runner's workflow says what
// took it (RunnerDone.Cause) when it ends, after GitHub let the runner go;
// the job's completed delivery, failed or cancelled, names that runner
// (ScaleRequest.Failed). Either may come first, so the pool keeps each for
// lostMatchWindow, and a match starts (or signals) the job's re-run workflow.
// A job that failed while its runner lived never matches: its runner ended
// by itself or was stopped, with no cause.

// lostMatchWindow is how long a lost runner waits for its job's failed
// completion and the other way round: GitHub fails a vanished runner's job
// within minutes, and the runner's workflow ends when GitHub lets it go.
const lostMatchWindow = time.Hour

// maxLostKept bounds each list against a burst of failures.
const maxLostKept = 100

// lostBeforeHeardVersion marks pools that keep a runner infrastructure took
// away before anyone heard it registered: a failed job naming it proves it ran.
const lostBeforeHeardVersion = "lost-before-registration-heard"

// noteLostRunner remembers a runner that infrastructure took away. It need not
// be known as registered: a runner lost just after its job started may have
// seen neither its registration nor, under load, the pool its job's
// in_progress delivery, and only a failed job that names it makes a match.
// A runner that ended otherwise lost no job: its failed jobs failed by
// themselves and are forgotten.
func (p *poolRun) noteLostRunner(ctx workflow.Context, r PoolRunner, d RunnerDone) {
	if p.state.Spec.RerunLostJobs <= 0 {
		return
	}
	unheard := !(d.started() || r.Registered)
	// Pools before the version forgot an unheard runner.
	if d.Cause == "" || (unheard && workflow.GetVersion(ctx, lostBeforeHeardVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion) {
		kept := p.state.FailedJobs[:0]
		for _, f := range p.state.FailedJobs {
			if f.Runner != d.Name {
				kept = append(kept, f)
			}
		}
		p.state.FailedJobs = kept
		return
	}
	workflow.GetLogger(ctx).Info("runner lost to infrastructure", "runner", d.Name, "cause", d.Cause)
	p.state.LostRunners = append(p.state.LostRunners, LostRunner{Name: d.Name, Cause: d.Cause, At: workflow.Now(ctx)})
	if n := len(p.state.LostRunners); n > maxLostKept {
		p.state.LostRunners = p.state.LostRunners[n-maxLostKept:]
	}
}

// noteFailedJobs remembers the failed jobs of a scale request that ran on
// runners of this pool, present or lost.
func (p *poolRun) noteFailedJobs(ctx workflow.Context, failed []FailedJob) {
	if p.state.Spec.RerunLostJobs <= 0 {
		return
	}
	now := workflow.Now(ctx)
	for _, f := range failed {
		if p.hasRunner(f.Runner) || p.lostRunner(f.Runner) >= 0 {
			f.At = now
			p.state.FailedJobs = append(p.state.FailedJobs, f)
		}
	}
	if n := len(p.state.FailedJobs); n > maxLostKept {
		p.state.FailedJobs = p.state.FailedJobs[n-maxLostKept:]
	}
}

func (p *poolRun) hasRunner(name string) bool {
	for _, r := range p.state.Runners {
		if r.Name == name {
			return true
		}
	}
	return false
}

func (p *poolRun) lostRunner(name string) int {
	for i, l := range p.state.LostRunners {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// rerunLostJobs signals the re-run workflow of every failed job whose runner
// was lost, and forgets both; entries that found no match in lostMatchWindow
// are forgotten too.
func (p *poolRun) rerunLostJobs(ctx workflow.Context) {
	s := &p.state
	if len(s.FailedJobs) == 0 && len(s.LostRunners) == 0 {
		return
	}
	now := workflow.Now(ctx)
	type match struct {
		job  FailedJob
		lost LostRunner
	}
	var matches []match
	keptJobs := s.FailedJobs[:0]
	for _, f := range s.FailedJobs {
		i := p.lostRunner(f.Runner)
		switch {
		case i >= 0:
			matches = append(matches, match{f, s.LostRunners[i]})
			s.LostRunners = append(s.LostRunners[:i], s.LostRunners[i+1:]...)
		case now.Sub(f.At) < lostMatchWindow:
			keptJobs = append(keptJobs, f)
		}
	}
	s.FailedJobs = keptJobs
	keptRunners := s.LostRunners[:0]
	for _, l := range s.LostRunners {
		if now.Sub(l.At) < lostMatchWindow {
			keptRunners = append(keptRunners, l)
		}
	}
	s.LostRunners = keptRunners
	for _, m := range matches {
		f, ok := p.findLostJob(ctx, m.job)
		if !ok {
			continue
		}
		signal := p.rerunSignal(f, m.lost, now)
		err := workflow.ExecuteActivity(kubeOptions(ctx), calls.SignalWithStartWorkflow, signal.start).Get(ctx, nil)
		if err != nil {
			workflow.GetLogger(ctx).Error("cannot start a lost job's re-run", "workflow", signal.start.Start.ID, "error", err)
			continue
		}
		p.events = append(p.events, "JobLost: "+signal.event)
	}
}

// findLostJob gives f with GitHub's ids of its job: a job a runner scale set
// reported by an id of its own is looked up by its runner's name. A job that
// cannot be found is not re-run, and the pool's resource says so.
func (p *poolRun) findLostJob(ctx workflow.Context, f FailedJob) (FailedJob, bool) {
	if !f.FindByRunner {
		return f, true
	}
	spec := p.state.Spec
	in := calls.FindRunnerJobInput{Credentials: spec.Scope.Credentials, Repository: f.Repository, RunID: f.RunID, Runner: f.Runner, QueuedAt: f.QueuedAt}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// A run unknown means pages of runs to search.
		StartToCloseTimeout: 2 * time.Minute, HeartbeatTimeout: ActivityHeartbeatTimeout, RetryPolicy: callRetry(),
	})
	var found calls.FindRunnerJobOutput
	err := workflow.ExecuteActivity(actx, calls.FindRunnerJob, in).Get(ctx, &found)
	switch {
	case err != nil:
		workflow.GetLogger(ctx).Error("cannot find a lost job by its runner", "runner", f.Runner, "repository", f.Repository, "error", err)
		p.events = append(p.events, fmt.Sprintf("JobLost: the job %q lost with runner %s in %s was not re-run: GitHub did not say which job it was: %v", f.JobName, f.Runner, f.Repository, err))
		return f, false
	case !found.Found:
		p.events = append(p.events, fmt.Sprintf("JobLost: the job %q lost with runner %s in %s was not re-run: no recent workflow run of the repository has a job that ran on that runner", f.JobName, f.Runner, f.Repository))
		return f, false
	}
	f.RunID, f.JobID, f.JobName, f.RunAttempt, f.FindByRunner = found.RunID, found.JobID, found.JobName, max(found.RunAttempt, 1), false
	return f, true
}

type lostJobSignal struct {
	start calls.WorkflowSignalStart
	event string
}

func (p *poolRun) rerunSignal(f FailedJob, lost LostRunner, now time.Time) lostJobSignal {
	spec := p.state.Spec
	id := contract.RerunWorkflowID(f.Repository, f.RunID, f.JobName)
	job := fmt.Sprintf("job %q (%d) of %s run %d", f.JobName, f.JobID, f.Repository, f.RunID)
	in, _ := json.Marshal(RerunInput{Repository: f.Repository, RunID: f.RunID, JobName: f.JobName}) // plain data: cannot fail
	arg, _ := json.Marshal(JobLost{JobID: f.JobID, RunAttempt: f.RunAttempt, Runner: f.Runner, Cause: lost.Cause, Limit: spec.RerunLostJobs,
		Pool: calls.PoolResourceRef{Namespace: spec.Namespace, Kind: spec.Kind, Name: spec.Name}, Credentials: spec.Scope.Credentials, At: now})
	return lostJobSignal{start: calls.WorkflowSignalStart{
		Start: calls.WorkflowStart{ID: id, Type: "RerunWorkflow", TaskQueue: contract.TaskQueue, Input: in,
			Memo: map[string]any{"job": job, "pool": spec.Kind + " " + spec.Namespace + "/" + spec.Name},
			Keywords: map[string]string{contract.SearchAttrKind.GetName(): "rerun", contract.SearchAttrPool.GetName(): spec.Namespace + "/" + spec.Name,
				contract.SearchAttrRunnerName.GetName(): f.Runner, contract.SearchAttrScope.GetName(): spec.Scope.String()}},
		Signal: contract.SignalJobLost, Arg: arg,
	}, event: fmt.Sprintf("%s lost with runner %s (%s); re-run workflow %s", job, f.Runner, lost.Cause, id)}
}
