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
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		// A burst starts one runner workflow and activity per job at once. With
		// Temporal's default of two pollers most tasks miss a waiting poller and
		// take the slower backlog path; eight keep a burst of 100 on the fast path.
		MaxConcurrentWorkflowTaskPollers: 8,
		MaxConcurrentActivityTaskPollers: 8,
	})
	w.RegisterWorkflow(workflows.RunnerWorkflow)
	w.RegisterWorkflow(workflows.PoolWorkflow)
	w.RegisterWorkflow(workflows.AutoscalerWorkflow)
	w.RegisterActivity(kube)
	w.RegisterActivity(gh)
	return w
}

// DefaultStickyCacheSize is the Temporal SDK's own default: how many workflows a
// process keeps in memory between their tasks.
const DefaultStickyCacheSize = 10000

// SetStickyCacheSize sets the process's sticky workflow cache. A workflow in the
// cache runs its next task without replaying its history; one out of it is
// replayed. Call it before any worker starts.
func SetStickyCacheSize(n int) {
	sdkworker.SetStickyWorkflowCacheSize(n)
}
