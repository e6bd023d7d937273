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
// ones are named, failed jobs can be re-run. A newly assigned job is an
// arrival, as a queued delivery is, for an auto buffer.
func (a *autoscalerRun) onScaleSet(ctx workflow.Context, m contract.ScaleSetMessage) {
	now := workflow.Now(ctx)
	a.state.ScaleSet = &ScaleSetDemand{ScaleSetID: m.ScaleSetID, MessageID: m.MessageID, Assigned: max(m.Assigned, 0), At: now}
	for _, ev := range m.Events {
		switch ev.Action {
		case "queued":
			// The level is the demand; an arrival only feeds an auto buffer's rate.
			if a.state.Spec.AutoIdle != nil && workflow.GetVersion(ctx, scaleSetArrivalsVersion, workflow.DefaultVersion, 1) == 1 {
				a.noteArrival(now)
			}
		case "in_progress", "completed":
			a.tellRunner(ctx, ev)
			a.applyJob(ctx, ev, now)
		}
	}
}

// scaleSetArrivalsVersion marks autoscalers that count a scale set's newly
// assigned jobs as arrivals for arcflow.dev/idle-runners: auto.
const scaleSetArrivalsVersion = "scaleset-arrivals"

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
