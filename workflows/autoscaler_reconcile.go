package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// reconcileQueuedJobs is the safety net for missed webhooks: reserve queued jobs
// that no webhook announced, and release reservations of jobs that are gone.
func (a *autoscalerRun) reconcileQueuedJobs(ctx workflow.Context) {
	spec := a.state.Spec
	var out activities.QueuedJobsOutput
	in := activities.QueuedJobsInput{Repositories: spec.Repositories, Labels: spec.TargetLabels, Credentials: spec.Scope.Credentials}
	if err := workflow.ExecuteActivity(githubOptions(ctx), gh.ListQueuedJobs, in).Get(ctx, &out); err != nil {
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
