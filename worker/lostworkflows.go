package worker

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// DefaultWorkflowCheckPeriod is how often the leader looks for resources whose
// workflow is gone (--workflow-check-period).
const DefaultWorkflowCheckPeriod = 30 * time.Second

// runningWorkflowsQuery lists the pool and autoscaler workflows that run.
const runningWorkflowsQuery = "(ArcflowKind = 'pool' OR ArcflowKind = 'autoscaler') AND ExecutionStatus = 'Running'"

// watchLostWorkflows starts again, every period, the workflow of each
// accepted resource that has none running: Temporal's store was lost or
// replaced (a bundled Temporal whose volume went, a move to another
// Temporal), or someone terminated it. Informers tell a change of a resource,
// not the loss of its workflow, so without this a lost store would leave
// every pool unmanaged until its next edit. A restarted pool takes over the
// runners it finds (workflows.adoptOwnRunners) and its autoscaler reserves
// the jobs that queued or run meanwhile, so nothing is left to do by hand.
func (w *ResourceWatcher) watchLostWorkflows(ctx context.Context) {
	if w.WorkflowCheckPeriod <= 0 {
		return
	}
	tick := time.NewTicker(w.WorkflowCheckPeriod)
	defer tick.Stop()
	restarted := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.restartLostWorkflows(ctx, restarted)
		}
	}
}

// acceptedResource is a resource whose workflow should run.
type acceptedResource struct {
	kind string
	obj  *unstructured.Unstructured
}

// restartLostWorkflows asks Temporal once for the running workflows, and for
// each accepted resource missing there, confirms with a describe (the list
// may lag a start) before starting its workflow again.
//
// restarted holds when each workflow was last enqueued for a start: one
// enqueued less than a period ago is not lost again. A slow check (Temporal
// just back) makes the ticker fire again at once, before the queue has
// started what the check found; that workflow was counted lost twice, with
// two WorkflowRestarted events.
func (w *ResourceWatcher) restartLostWorkflows(ctx context.Context, restarted map[string]time.Time) {
	want := w.acceptedResources()
	if len(want) == 0 {
		return
	}
	running, err := w.runningWorkflowIDs(ctx)
	if err != nil {
		w.Log.Warn("cannot list the running workflows; looking for lost ones next period", "error", err)
		return
	}
	lost := map[string]acceptedResource{}
	now := time.Now()
	for id, at := range restarted {
		if now.Sub(at) >= w.WorkflowCheckPeriod {
			delete(restarted, id)
		}
	}
	for id, r := range want {
		if running[id] || !restarted[id].IsZero() {
			continue
		}
		desc, err := w.Temporal.DescribeWorkflowExecution(ctx, id, "")
		var missing *serviceerror.NotFound
		switch {
		case errors.As(err, &missing):
		case err != nil:
			w.Log.Warn("cannot tell whether a workflow runs", "workflow", id, "error", err)
			continue
		case desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			continue
		}
		lost[id] = r
	}
	// All are found before any starts: a pool's start also starts its HRAs'
	// autoscalers (refreshHRAsOf), which would hide their loss.
	for id, r := range lost {
		w.Log.Warn("the resource's workflow is gone from Temporal (its store lost or replaced, or the workflow terminated); starting it again",
			"kind", r.kind, "resource", r.obj.GetNamespace()+"/"+r.obj.GetName(), "workflow", id)
		w.normalEvent(ctx, r.kind, r.obj, "WorkflowRestarted",
			"the workflow "+id+" was gone from Temporal and was started again; it takes over what it finds in the cluster and on GitHub")
		w.enqueue(r.kind, r.obj)
		restarted[id] = now
	}
}

// acceptedResources are the cached resources arcflow accepted (their
// Accepted condition is True) and that are not being deleted, by the ID of
// their workflow.
func (w *ResourceWatcher) acceptedResources() map[string]acceptedResource {
	out := map[string]acceptedResource{}
	for kind, lister := range map[string]cache.GenericLister{v1alpha1.KindRunnerDeployment: w.rds, v1alpha1.KindRunnerSet: w.rss, kindHRA: w.hras} {
		if lister == nil {
			continue
		}
		objs, err := lister.List(labels.Everything())
		if err != nil {
			continue
		}
		for _, obj := range objs {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok || u.GetDeletionTimestamp() != nil || conditionStatus(u, "Accepted") != "True" {
				continue
			}
			id := contract.PoolWorkflowID(u.GetNamespace(), kind, u.GetName())
			if kind == kindHRA {
				id = contract.AutoscalerWorkflowID(u.GetNamespace(), u.GetName())
			}
			out[id] = acceptedResource{kind: kind, obj: u}
		}
	}
	return out
}

// runningWorkflowIDs lists the running pool and autoscaler workflows.
func (w *ResourceWatcher) runningWorkflowIDs(ctx context.Context) (map[string]bool, error) {
	ids := map[string]bool{}
	var token []byte
	for {
		resp, err := w.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: runningWorkflowsQuery, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			ids[e.GetExecution().GetWorkflowId()] = true
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}
