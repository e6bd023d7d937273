package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// statusLocalVersion: pools and autoscalers write their resource's status as a
// local activity. As an activity task, each write cost the decision loop a
// matching round trip each way: in a burst of 100 on the dev server an
// autoscaler's write waited 1.4 s for a poller, and the jobs that came
// meanwhile waited for the next decision. A status write is one short PATCH
// (a pool's also its events), idempotent, and written again by the next
// decision if it failed.
const statusLocalVersion = "status-local"

// statusCall runs a status write: in the workflow task from statusLocalVersion
// on, giving up after 30 s so a failing write holds no decision for long.
func statusCall(ctx workflow.Context, activity, arg any) workflow.Future {
	if workflow.GetVersion(ctx, statusLocalVersion, workflow.DefaultVersion, 1) >= 1 {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			ScheduleToCloseTimeout: 30 * time.Second, StartToCloseTimeout: 10 * time.Second, RetryPolicy: callRetry(),
		}), activity, arg)
	}
	return workflow.ExecuteActivity(kubeOptions(ctx), activity, arg)
}
