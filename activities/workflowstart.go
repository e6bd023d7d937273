package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Workflows starts workflows for a workflow that needs many at once. A pool that
// started its runners as child workflows had every child's start recorded in its
// own history, one locked update of the pool after another; started here, each
// runner's start is a write to its own history alone, and they go out together.
type Workflows struct {
	Client client.Client
	// GroupSignals groups SignalWorkflowGrouped's calls while
	// CanGroupSignals (nil: always) says every worker replica reads grouped
	// signals; otherwise each goes alone.
	GroupSignals    bool
	CanGroupSignals func(context.Context) bool
	// SignalGroupWindow is how long a grouped signal waits for others
	// (signalGroupWindow when zero).
	SignalGroupWindow time.Duration
	// CreateRunner creates a runner's pod before its workflow starts
	// (WorkflowStart.RunnerPod; nil: each runner's workflow creates its own),
	// while CanCreateRunners (nil: always) says every worker replica can run
	// such a runner.
	CreateRunner     func(context.Context, RunnerPodInput) (RunnerPodOutput, error)
	CanCreateRunners func(context.Context) bool
	// groups gathers SignalWorkflowGrouped's calls.
	groups signalGroups
}

// startConcurrency bounds the start calls in flight from one activity.
const startConcurrency = 16

// startCallTimeout bounds one start call, which outlives its activity's
// cancellation (StartWorkflows).
const startCallTimeout = 20 * time.Second

// StartWorkflows starts every workflow. It is idempotent: a workflow that runs
// already, or that ran and closed under the same ID, counts as started and is
// never started again, so a retry after a partial failure starts only the rest.
//
// A call in flight is never cut short, even when the activity is cancelled
// (a heartbeat that a loaded server did not answer within the heartbeat
// timeout cancels it): the server may have made the workflow and handed its
// first workflow task to this worker in the answer (eager start). An
// abandoned answer strands that task until its 10 s timeout, and the retry
// finds the workflow made, with no task to hand over. Once cancelled, the
// activity starts no more calls; its retry starts the rest.
func (w *Workflows) StartWorkflows(ctx context.Context, starts []WorkflowStart) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, startConcurrency)
	for _, s := range starts {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("start workflow %s: not tried: %w", s.ID, ctx.Err()))
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := w.start(ctx, s); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (w *Workflows) start(ctx context.Context, s WorkflowStart) error {
	var attrs []temporal.SearchAttributeUpdate
	for name, value := range s.Keywords {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(name).ValueSet(value))
	}
	reuse := enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	if s.ReuseClosed {
		reuse = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	input := w.createRunnerFirst(ctx, s)
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startCallTimeout)
	defer cancel()
	_, err := w.Client.ExecuteWorkflow(callCtx, client.StartWorkflowOptions{
		ID: s.ID, TaskQueue: s.TaskQueue, Memo: s.Memo,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		WorkflowTaskTimeout:   s.TaskTimeout,
		// A closed workflow of the same ID is a runner that already ran: never again.
		WorkflowIDReusePolicy: reuse,
		// A running one is this start's earlier attempt: use it.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// The server hands the first workflow task straight back to this
		// process's worker when it has a free slot, skipping a matching round trip.
		EnableEagerStart: true,
	}, s.Type, input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start workflow %s: %w", s.ID, err)
	}
	return nil
}
