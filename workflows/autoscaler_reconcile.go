package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// reconcileQueuedJobs is the safety net for missed webhooks: reserve queued jobs
// that no webhook announced, and release reservations of jobs that are gone.
func (a *autoscalerRun) reconcileQueuedJobs(ctx workflow.Context) {
	if workflow.GetVersion(ctx, reconcileByRunVersion, workflow.DefaultVersion, 1) >= 1 {
		a.reconcileByRun(ctx)
		return
	}
	spec := a.state.Spec
	var out calls.QueuedJobsOutput
	in := calls.QueuedJobsInput{Repositories: spec.Repositories, Labels: spec.TargetLabels, Credentials: spec.Scope.Credentials}
	if err := workflow.ExecuteActivity(githubOptions(ctx), calls.ListQueuedJobs, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("reconcile skipped", "hra", spec.Name, "error", err)
		return
	}
	now := workflow.Now(ctx)
	open := map[int64]bool{}
	for _, id := range out.Queued {
		open[id] = true
		if _, spilled := a.state.Spilled[id]; spilled {
			continue // reserved where it was passed on
		}
		a.state.Reservations.Apply(contract.JobEvent{JobID: id, Action: "queued"}, now, spec.TriggerDuration)
	}
	for _, id := range out.InProgress {
		open[id] = true
	}
	for _, res := range append([]Reservation(nil), a.state.Reservations.Active...) {
		// A reservation younger than the period may be for a job GitHub lists late.
		if !open[res.JobID] && now.Sub(res.EffectiveTime) > spec.ReconcilePeriod {
			a.state.Reservations.Apply(contract.JobEvent{JobID: res.JobID, Action: "completed"}, now, spec.TriggerDuration)
		}
	}
}

// reserveRunningVersion marks autoscalers whose first reconcile, with no
// history to go on (a new HRA, or Temporal's store lost or replaced), asks
// about every open run at once and reserves its in-progress jobs as well as
// its queued ones: the runners running them, taken over from the cluster
// (adoptOwnRunners, adoptARCRunners), are then capacity the autoscaler wants
// rather than a surplus it tries to stop, and jobs that queued while no
// autoscaler existed get runners at its first decision.
const reserveRunningVersion = "reserve-running-jobs"

// reconcileByRunVersion marks autoscalers whose reconcile asks about runs, and
// about the jobs of queued runs no webhook announced, instead of every open
// run's jobs.
const reconcileByRunVersion = "reconcile-by-run"

// reconcileByRun reserves queued jobs of runs no webhook announced and
// releases reservations whose run is no longer open. A reservation without a
// run (made before deliveries carried it) is left to its expiry. Its cost does
// not grow with the queue: the open runs per repository, plus one call per
// queued run the autoscaler knows nothing of.
func (a *autoscalerRun) reconcileByRun(ctx workflow.Context) {
	spec := a.state.Spec
	in := calls.QueuedJobsInput{Repositories: spec.Repositories, Labels: spec.TargetLabels, Credentials: spec.Scope.Credentials, ByRun: true,
		Quiet: min(spec.ReconcilePeriod, calls.RunQuiet)}
	// ARC's capacity reservations, in force after a takeover from ARC, stand
	// for the jobs ARC saw, the running ones among them: reserving those again
	// would keep ARC's idle runners for jobs that already have one.
	var wakes []time.Time
	arcReserved := manualReservations(spec, a.state.ReleasedCapacity, workflow.Now(ctx), &wakes) > 0
	fresh := a.fresh && !arcReserved && workflow.GetVersion(ctx, reserveRunningVersion, workflow.DefaultVersion, 1) >= 1
	a.fresh = false
	if fresh {
		in.Running, in.Quiet = true, 0
	}
	seen := map[int64]bool{}
	for _, res := range a.state.Reservations.Active {
		if res.RunID != 0 && !seen[res.RunID] {
			seen[res.RunID] = true
			in.KnownRuns = append(in.KnownRuns, res.RunID)
		}
	}
	var out calls.QueuedJobsOutput
	if err := workflow.ExecuteActivity(githubOptions(ctx), calls.ListQueuedJobs, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("reconcile skipped", "hra", spec.Name, "error", err)
		return
	}
	if out.Deferred {
		workflow.GetLogger(ctx).Info("reconcile deferred: the GitHub call budget is spent", "hra", spec.Name)
		return
	}
	now := workflow.Now(ctx)
	for i, id := range out.Queued {
		if _, spilled := a.state.Spilled[id]; spilled {
			continue // reserved where it was passed on
		}
		a.state.Reservations.Apply(contract.JobEvent{JobID: id, RunID: runAt(out.QueuedRuns, i), Action: "queued"}, now, spec.TriggerDuration)
	}
	for i, id := range out.InProgress {
		a.state.Reservations.Apply(contract.JobEvent{JobID: id, RunID: runAt(out.InProgressRuns, i), Action: "queued"}, now, spec.TriggerDuration)
		a.markStarted(id, now)
	}
	open := map[int64]bool{}
	for _, run := range out.OpenRuns {
		open[run] = true
	}
	released := 0
	for _, res := range append([]Reservation(nil), a.state.Reservations.Active...) {
		// A reservation younger than the period may be for a run GitHub lists late.
		if res.RunID != 0 && !open[res.RunID] && now.Sub(res.EffectiveTime) > spec.ReconcilePeriod {
			a.state.Reservations.Apply(contract.JobEvent{JobID: res.JobID, Action: "completed"}, now, spec.TriggerDuration)
			released++
		}
	}
	workflow.GetLogger(ctx).Info("reconciled", "hra", spec.Name, "github_calls", out.Calls, "unknown_queued_jobs", len(out.Queued),
		"running_jobs_reserved", len(out.InProgress), "reservations_released", released)
}

// runAt is runs[i], the run of the i-th job listed, or 0 when not given.
func runAt(runs []int64, i int) int64 {
	if i < len(runs) {
		return runs[i]
	}
	return 0
}
