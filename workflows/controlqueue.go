package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// controlQueueVersion marks autoscaler, pool and listener runs that continue
// as new on contract.ControlTaskQueue. Runs started before that queue existed
// are on the runners' queue, where a burst's runner tasks delayed their
// decisions; they move at their next continue-as-new.
const controlQueueVersion = "control-task-queue"

// onControlQueue is ctx with the control queue for the next run of a run still
// on another queue.
func onControlQueue(ctx workflow.Context) workflow.Context {
	if workflow.GetInfo(ctx).TaskQueueName == contract.ControlTaskQueue {
		return ctx
	}
	if workflow.GetVersion(ctx, controlQueueVersion, workflow.DefaultVersion, 1) < 1 {
		return ctx
	}
	return workflow.WithWorkflowTaskQueue(ctx, contract.ControlTaskQueue)
}
