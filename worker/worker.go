package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows"
)

// New builds the Temporal worker of arcflow's task queue, with every workflow and
// the given activities registered.
func New(c client.Client, kube *activities.Kubernetes, gh *activities.GitHub) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
	w.RegisterWorkflow(workflows.RunnerWorkflow)
	w.RegisterWorkflow(workflows.PoolWorkflow)
	w.RegisterWorkflow(workflows.AutoscalerWorkflow)
	w.RegisterActivity(kube)
	w.RegisterActivity(gh)
	return w
}
