package world

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"
)

// RunActions are the billable Actions of every workflow run arcflow created for
// one Kubernetes namespace, split at a point in time.
type RunActions struct {
	// Before are the Actions recorded before the split (the autoscaler and pool
	// coming up), From those recorded at or after it.
	Before, From Actions
	// ByWorkflow splits From by the workflow that paid it: autoscaler, pool,
	// runner or rerun (WorkflowKind).
	ByWorkflow map[string]Actions
	// Runs counts the workflow runs read (each continue-as-new run is one).
	Runs int
}

// WorkflowKind names what an arcflow workflow ID stands for: autoscaler
// (hra/...), pool, runner or rerun.
func WorkflowKind(id string) string {
	prefix, _, _ := strings.Cut(id, "/")
	if prefix == "hra" {
		return "autoscaler"
	}
	return prefix
}

// PaidBy lists, per unit (job), what each workflow kind paid and of which
// kinds of Actions, most first: "runner 6.10 (2.00 signals, ...); pool ...".
func PaidBy(by map[string]Actions, units int) string {
	kinds := make([]string, 0, len(by))
	for k := range by {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if by[kinds[i]].Total() != by[kinds[j]].Total() {
			return by[kinds[i]].Total() > by[kinds[j]].Total()
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %.2f (%s)", k, float64(by[k].Total())/float64(max(units, 1)), by[k].PerUnit(units)))
	}
	return strings.Join(parts, "; ")
}

// NamespaceActions reads the whole history of every autoscaler, pool and runner
// workflow run of a namespace, open or closed, and counts its Actions. It starts
// from the runs the visibility store lists and follows each history to the child
// runs it started and the run it continued as new: on a cluster, visibility
// (PostgreSQL, written asynchronously) can lag behind the histories by seconds.
func NamespaceActions(ctx context.Context, tc client.Client, namespace string, split time.Time) (RunActions, error) {
	out := RunActions{ByWorkflow: map[string]Actions{}}
	err := walkRuns(ctx, tc, arcflowRunQueries([]string{namespace}), 1, func(ref runRef, events []*historypb.HistoryEvent) {
		before, from := splitEvents(events, split)
		counted := CountActions(from)
		out.Before, out.From = out.Before.Plus(CountActions(before)), out.From.Plus(counted)
		kind := WorkflowKind(ref.id)
		out.ByWorkflow[kind] = out.ByWorkflow[kind].Plus(counted)
		out.Runs++
	})
	return out, err
}

// arcflowRunQueries are the visibility queries that list the autoscaler, pool,
// runner and scale set listener workflows of namespaces.
func arcflowRunQueries(namespaces []string) []string {
	var out []string
	for _, ns := range namespaces {
		for _, prefix := range []string{"hra", "pool", "runner", "scaleset"} {
			out = append(out, fmt.Sprintf("WorkflowId STARTS_WITH '%s/%s/'", prefix, ns))
		}
	}
	return out
}

// walkRuns reads the whole history of every run the queries list, and of the
// child runs and continued-as-new runs those histories started, parallel at a
// time, and calls visit with each (one call at a time).
func walkRuns(ctx context.Context, tc client.Client, queries []string, parallel int, visit func(runRef, []*historypb.HistoryEvent)) error {
	var queue []runRef
	for _, q := range queries {
		refs, err := listRuns(ctx, tc, q)
		if err != nil {
			return fmt.Errorf("list workflows (%s): %w", q, err)
		}
		queue = append(queue, refs...)
	}
	seen := map[runRef]bool{}
	for len(queue) > 0 {
		var batch []runRef
		for _, ref := range queue {
			if !seen[ref] {
				seen[ref] = true
				batch = append(batch, ref)
			}
		}
		queue = nil
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(max(parallel, 1))
		for _, ref := range batch {
			g.Go(func() error {
				events, err := History(gctx, tc, ref.id, ref.run)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				queue = append(queue, runsStartedBy(ref.id, events)...)
				visit(ref, events)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}

// runRef names one workflow run.
type runRef struct{ id, run string }

func listRuns(ctx context.Context, tc client.Client, query string) ([]runRef, error) {
	var refs []runRef
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			refs = append(refs, runRef{e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return refs, nil
		}
	}
}

// runsStartedBy are the child runs a history started and the run it continued as.
func runsStartedBy(id string, events []*historypb.HistoryEvent) []runRef {
	var refs []runRef
	for _, e := range events {
		if child := e.GetChildWorkflowExecutionStartedEventAttributes().GetWorkflowExecution(); child != nil {
			refs = append(refs, runRef{child.GetWorkflowId(), child.GetRunId()})
		}
		if next := e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId(); next != "" {
			refs = append(refs, runRef{id, next})
		}
	}
	return refs
}

// History is a workflow run's whole history (run "" is the latest run).
func History(ctx context.Context, tc client.Client, id, run string) ([]*historypb.HistoryEvent, error) {
	var events []*historypb.HistoryEvent
	it := tc.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s (run %s): %w", id, run, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// splitEvents cuts a history at the first event recorded at or after t.
func splitEvents(events []*historypb.HistoryEvent, t time.Time) (before, from []*historypb.HistoryEvent) {
	for i, e := range events {
		if !e.GetEventTime().AsTime().Before(t) {
			return events[:i], events[i:]
		}
	}
	return events, nil
}
