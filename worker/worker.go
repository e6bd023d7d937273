package worker

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Worker is a process's Temporal workers: one of the runners' task queue, one
// of the control queue (autoscalers, pools, listeners), and one of the scale
// set polls' own queue.
type Worker struct {
	main, control, polls sdkworker.Worker
}

// Start starts all three; Stop stops them.
func (w *Worker) Start() error {
	started := []sdkworker.Worker{}
	for _, each := range []sdkworker.Worker{w.main, w.control, w.polls} {
		if err := each.Start(); err != nil {
			for _, s := range started {
				s.Stop()
			}
			return err
		}
		started = append(started, each)
	}
	return nil
}

func (w *Worker) Stop() {
	w.polls.Stop()
	w.control.Stop()
	w.main.Stop()
}

// Settings choose how the worker runs its workflows.
type Settings struct {
	// GroupRunnerEnds groups the ends of runners that end together into one
	// signal to their pool (activities.Workflows.GroupSignals).
	GroupRunnerEnds bool
	// Revisions, when set, says whether every replica reads grouped ends and
	// runs the runners a pool's start creates (RunnerRevisionGroupedDone,
	// RunnerRevisionCreatedByStart); nil: a worker with no other replicas,
	// which does.
	Revisions *WorkerRevisions
}

// New builds the Temporal workers, with every workflow and the given
// activities registered.
func New(c client.Client, kube *activities.Kubernetes, gh *activities.GitHub, sets *activities.ScaleSets, settings Settings) *Worker {
	if sets == nil {
		sets = &activities.ScaleSets{} // its activities fail: no pool joins a scale set
	}
	// One for both queues, so that ends grouped are grouped across them.
	temporal := &activities.Workflows{Client: c, GroupSignals: settings.GroupRunnerEnds}
	if kube != nil {
		temporal.CreateRunner = kube.EnsureRunnerPod // a runner's pod goes with its start
	}
	if r := settings.Revisions; r != nil {
		temporal.CanCreateRunners = func(ctx context.Context) bool { return r.AllRun(ctx, workflows.RunnerRevisionCreatedByStart) }
		// The release of RunnerRevisionGroupedDone reads runners-done.
		temporal.CanGroupSignals = func(ctx context.Context) bool { return r.AllRun(ctx, workflows.RunnerRevisionGroupedDone) }
	}
	// Both queues run every workflow type: workflows started before the
	// control queue stay on the main one until they continue as new.
	return &Worker{main: newQueueWorker(c, contract.TaskQueue, kube, gh, sets, temporal), control: newQueueWorker(c, contract.ControlTaskQueue, kube, gh, sets, temporal),
		polls: newPollWorker(c, sets)}
}

func newQueueWorker(c client.Client, queue string, kube *activities.Kubernetes, gh *activities.GitHub, sets *activities.ScaleSets, temporal *activities.Workflows) sdkworker.Worker {
	w := sdkworker.New(c, queue, sdkworker.Options{
		// A burst starts one runner workflow and activity per job at once. With
		// Temporal's default of two pollers most tasks miss a waiting poller and
		// take the slower backlog path; eight keep a burst of 100 on the fast path.
		MaxConcurrentWorkflowTaskPollers: 8,
		MaxConcurrentActivityTaskPollers: 8,
		// Heartbeats leave at once rather than held back to 80 % of the heartbeat
		// timeout, so a late one still has most of the timeout to spare.
		Interceptors:                 []interceptor.WorkerInterceptor{&heartbeats{every: HeartbeatEvery}},
		MaxHeartbeatThrottleInterval: HeartbeatEvery,
		// A killed replica cannot hand its cached workflows back: their next tasks
		// wait this long on its sticky queue before any replica takes them (the
		// SDK's default is 5 s). A live worker with eight pollers takes a task in
		// milliseconds; one that misses this only costs another replica a replay.
		StickyScheduleToStartTimeout: StickyScheduleToStartTimeout,
	})
	w.RegisterWorkflow(workflows.RunnerWorkflow)
	w.RegisterWorkflow(workflows.PoolWorkflow)
	w.RegisterWorkflow(workflows.AutoscalerWorkflow)
	w.RegisterWorkflow(workflows.RerunWorkflow)
	w.RegisterWorkflow(workflows.ScaleSetWorkflow)
	w.RegisterActivity(kube)
	w.RegisterActivity(gh)
	w.RegisterActivity(sets)
	w.RegisterActivity(temporal)
	return w
}

// newPollWorker runs the scale set polls on a queue of their own, without the
// main worker's heartbeat every second: a poll waits for messages for hours,
// and each heartbeat that reaches Temporal is an action. Its heartbeats go at
// the SDK's pace, 80 % of the poll's heartbeat timeout; a dead worker's poll
// moves on when its liveness Lease expires (PollWatch), not by heartbeat.
func newPollWorker(c client.Client, sets *activities.ScaleSets) sdkworker.Worker {
	w := sdkworker.New(c, contract.PollTaskQueue, sdkworker.Options{
		DisableWorkflowWorker:            true,
		MaxConcurrentActivityTaskPollers: 2,
	})
	w.RegisterActivityWithOptions(sets.PollScaleSet, activity.RegisterOptions{Name: calls.PollScaleSet})
	return w
}

// StickyScheduleToStartTimeout bounds how long a workflow task waits for the
// replica that cached the workflow before it goes to any replica.
const StickyScheduleToStartTimeout = 3 * time.Second

// DefaultStickyCacheSize is the Temporal SDK's own default: how many workflows a
// process keeps in memory between their tasks.
const DefaultStickyCacheSize = 10000

// SetStickyCacheSize sets the process's sticky workflow cache. A workflow in the
// cache runs its next task without replaying its history; one out of it is
// replayed. Call it before any worker starts.
func SetStickyCacheSize(n int) {
	sdkworker.SetStickyWorkflowCacheSize(n)
}
