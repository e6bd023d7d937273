package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// maxFinished bounds the runner names an autoscaler holds for its pool while
// the pool cannot be reached; older names are dropped, as those runners have
// long exited (their runner-done signal says the rest).
const maxFinished = 100

// finishedRunnersVersion marks autoscalers that pass the runners of completed
// jobs to their pool (ScaleRequest.Finished).
const finishedRunnersVersion = "finished-runners"

// noteFinished remembers the runner a completed job ran on. A completion
// releases its reservation at once, while the runner's pod takes a moment to
// exit; a pool that still counted that runner would stop another one, maybe
// one a queued job is about to take, for the replica no longer needed.
func (a *autoscalerRun) noteFinished(ctx workflow.Context, ev contract.JobEvent) {
	if ev.Action != "completed" || ev.RunnerName == "" {
		return
	}
	s := &a.state
	_, delivered := s.Reservations.Deliveries[ev.DeliveryID]
	_, completed := s.Reservations.EarlyCompletions[ev.JobID]
	if (ev.DeliveryID != "" && delivered) || completed {
		return // a redelivery: the pool heard of this runner already
	}
	a.noteFailed(ctx, ev)
	for _, name := range s.Finished {
		if name == ev.RunnerName {
			return
		}
	}
	s.Finished = append(s.Finished, ev.RunnerName)
	if len(s.Finished) > maxFinished {
		s.Finished = s.Finished[len(s.Finished)-maxFinished:]
	}
}

// finishedForPool is what the next scale request names as finished. Runs
// from before finishedRunnersVersion send no names, and so no extra request.
func (a *autoscalerRun) finishedForPool(ctx workflow.Context) []string {
	s := &a.state
	if len(s.Finished) == 0 {
		return nil
	}
	if workflow.GetVersion(ctx, finishedRunnersVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		s.Finished = nil
		return nil
	}
	return append([]string(nil), s.Finished...)
}

// scaleSetNamesFinishedVersion marks autoscalers of a runner scale set that
// say they name finished runners (ScaleRequest.NamesFinished) from the set's
// first message, not only once an auto buffer noted an arrival.
const scaleSetNamesFinishedVersion = "scaleset-names-finished"

// scaleSetNamesFinished says whether this autoscaler speaks for a scale set,
// whose listener passes on every JobCompleted with its runner's name. Its
// pool then counts a runner that ended after its job as capacity until the
// request naming it comes, as for a webhook's completed delivery; before, it
// waited CompletionGrace (2 s), and a loaded machine whose lowered level
// took longer to come replaced the runner with one no job needed (5 runner
// pods for 3 jobs in a CI run).
func (a *autoscalerRun) scaleSetNamesFinished(ctx workflow.Context) bool {
	return a.state.ScaleSet != nil &&
		workflow.GetVersion(ctx, scaleSetNamesFinishedVersion, workflow.DefaultVersion, 1) >= 1
}

// scaleSetLostJobsVersion marks autoscalers that pass on a runner scale
// set's failed jobs for their pool to find by runner name: before it, the
// set's job id went on as if it were GitHub's, and a job whose set named no
// run was dropped.
const scaleSetLostJobsVersion = "scaleset-lost-jobs"

// noteFailed remembers a job that completed failed or cancelled, for the pool
// to re-run should infrastructure have taken its runner (pool_lost.go).
func (a *autoscalerRun) noteFailed(ctx workflow.Context, ev contract.JobEvent) {
	if ev.Conclusion != "failure" && ev.Conclusion != "cancelled" {
		return
	}
	f := FailedJob{Runner: ev.RunnerName, Repository: ev.Repository, RunID: ev.RunID, JobID: ev.JobID,
		JobName: ev.JobName, RunAttempt: max(ev.RunAttempt, 1), Conclusion: ev.Conclusion}
	switch {
	case ev.ScaleSetJob && workflow.GetVersion(ctx, scaleSetLostJobsVersion, workflow.DefaultVersion, 1) == 1:
		f.FindByRunner, f.JobID, f.QueuedAt = true, 0, ev.QueuedAt
	case ev.JobName == "" || ev.RunID == 0:
		return
	}
	s := &a.state
	s.Failed = append(s.Failed, f)
	if len(s.Failed) > maxFinished {
		s.Failed = s.Failed[len(s.Failed)-maxFinished:]
	}
}
