package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// runningRunnersVersion marks autoscalers that pass the runners of started
// jobs (in_progress deliveries) to their pool (ScaleRequest.Running).
const runningRunnersVersion = "running-runners"

// noteRunning remembers the runner a job started on. GitHub hands a job only
// to a registered, idle runner, and that runner stays busy until the job's
// completion: the delivery tells the pool what a runner list would, for no
// GitHub call. Names wait for the next scale request (none is sent for them
// alone): the pool needs them when it chooses runners to stop, and the
// request that lowers its count carries them.
func (a *autoscalerRun) noteRunning(ev contract.JobEvent) {
	if ev.RunnerName == "" {
		return
	}
	s := &a.state
	s.StartsHeard = true
	if slices.Contains(s.Running, ev.RunnerName) {
		return // a redelivery
	}
	s.Running = append(s.Running, ev.RunnerName)
	if len(s.Running) > maxFinished {
		s.Running = s.Running[len(s.Running)-maxFinished:]
	}
}

// runningForPool adds the started jobs' runners to a scale request that goes
// out, and says that this autoscaler hears its jobs start. Runs from before
// runningRunnersVersion send neither.
func (a *autoscalerRun) runningForPool(ctx workflow.Context, req *ScaleRequest) {
	s := &a.state
	if !s.StartsHeard {
		return
	}
	if workflow.GetVersion(ctx, runningRunnersVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		s.Running, s.StartsHeard = nil, false
		return
	}
	req.Running = append([]string(nil), s.Running...)
	req.StartsDelivered = true
}

// jobStartedSignalVersion marks autoscalers that tell a runner its job started.
const jobStartedSignalVersion = "job-started-signal"

// tellRunner passes a job's start to the runner it started on, which learns
// from it that it registered (RunnerRevisionJobStarts): one signal where the
// runner would check GitHub on timers. A runner that is not this
// autoscaler's pool's (a spilled job's) or no longer runs is not found, which
// changes nothing.
func (a *autoscalerRun) tellRunner(ctx workflow.Context, ev contract.JobEvent) {
	if ev.Action != "in_progress" || ev.RunnerName == "" || ev.RunnerID == 0 {
		return
	}
	if workflow.GetVersion(ctx, jobStartedSignalVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	runner := contract.RunnerWorkflowID(a.state.Spec.Namespace, ev.RunnerName)
	started := contract.JobStarted{JobID: ev.JobID, RunnerID: ev.RunnerID}
	// Not awaited here: a burst's starts go out together, and the autoscaler's
	// decisions do not wait on them (wait and awaitTells take the results).
	a.tells = append(a.tells, workflow.SignalExternalWorkflow(ctx, runner, "", contract.SignalJobStarted, started))
}

// listenTells takes the results of the job starts passed on, as they come.
func (a *autoscalerRun) listenTells(ctx workflow.Context, sel workflow.Selector) {
	for _, told := range a.tells {
		sel.AddFuture(told, func(f workflow.Future) {
			a.tookTell(ctx, f)
		})
	}
}

// awaitTells takes every result still to come, before continue-as-new.
func (a *autoscalerRun) awaitTells(ctx workflow.Context) {
	for len(a.tells) > 0 {
		a.tookTell(ctx, a.tells[0])
	}
}

func (a *autoscalerRun) tookTell(ctx workflow.Context, f workflow.Future) {
	if err := f.Get(ctx, nil); err != nil {
		// The runner ended already, or is another pool's (a spilled job's).
		workflow.GetLogger(ctx).Debug("job start not passed on", "hra", a.state.Spec.Name, "error", err)
	}
	a.tells = slices.DeleteFunc(a.tells, func(other workflow.Future) bool { return other == f })
}

// quietStartsVersion marks autoscalers that take a job's start without a
// decision (quietStart).
const quietStartsVersion = "quiet-starts"

// quietStart takes a job's start that needs no decision: its runner's name
// only waits for the next scale request, so the autoscaler goes on waiting on
// the timer it has, where a decision would cost a new timer per start. A
// start while a batch window collects events, or of a job passed on to
// another autoscaler (forwarded there), goes the usual way; so do all starts
// of runs from before quietStartsVersion.
func (a *autoscalerRun) quietStart(ctx workflow.Context, ev contract.JobEvent) bool {
	s := &a.state
	if ev.Action != "in_progress" || len(s.Pending) > 0 {
		return false
	}
	if _, spilled := s.Spilled[ev.JobID]; spilled {
		return false
	}
	if workflow.GetVersion(ctx, quietStartsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	a.markStarted(ev.JobID, workflow.Now(ctx))
	a.noteRunning(ev)
	return true
}
