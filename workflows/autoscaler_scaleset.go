package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// onScaleSet applies a scale set listener's message. The demand is the
// service's level of assigned jobs, which replaces the count of reservations:
// batches truncate and jobs get reassigned, so events are never counted. The
// job starts and ends still reach the runners and the pool, as a webhook's
// in_progress and completed deliveries do: busy runners are known, finished
// ones are named, failed jobs can be re-run.
func (a *autoscalerRun) onScaleSet(ctx workflow.Context, m contract.ScaleSetMessage) {
	now := workflow.Now(ctx)
	a.state.ScaleSet = &ScaleSetDemand{ScaleSetID: m.ScaleSetID, MessageID: m.MessageID, Assigned: max(m.Assigned, 0), At: now}
	for _, ev := range m.Events {
		if ev.Action != "in_progress" && ev.Action != "completed" {
			continue
		}
		a.tellRunner(ctx, ev)
		a.applyJob(ctx, ev, now)
	}
}

// reserved is what the jobs ask for: the scale set's level when a listener
// speaks for the pool, else the unexpired reservations.
func (a *autoscalerRun) reserved() int {
	switch {
	case a.state.ScaleSet != nil:
		return a.state.ScaleSet.Assigned
	case a.state.Spec.ScaleSet != "":
		return 0 // no message yet
	}
	return len(a.state.Reservations.Active)
}
