package simworld

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// RunActions are the billable Actions of every workflow run arcflow created for
// one Kubernetes namespace, split at a point in time.
type RunActions struct {
	// Before are the Actions recorded before the split (the autoscaler and pool
	// coming up), From those recorded at or after it.
	Before, From Actions
	// Runs counts the workflow runs read (each continue-as-new run is one).
	Runs int
}

// NamespaceActions reads the whole history of every autoscaler, pool and runner
// workflow run of a namespace, open or closed, and counts its Actions.
func NamespaceActions(ctx context.Context, tc client.Client, namespace string, split time.Time) (RunActions, error) {
	var out RunActions
	for _, prefix := range []string{"hra", "pool", "runner"} {
		query := fmt.Sprintf("WorkflowId STARTS_WITH '%s/%s/'", prefix, namespace)
		var token []byte
		for {
			resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
			if err != nil {
				return out, fmt.Errorf("list %s workflows: %w", prefix, err)
			}
			for _, e := range resp.GetExecutions() {
				id, run := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
				events, err := historyOf(ctx, tc, id, run)
				if err != nil {
					return out, err
				}
				before, from := splitEvents(events, split)
				out.Before, out.From = out.Before.Plus(CountActions(before)), out.From.Plus(CountActions(from))
				out.Runs++
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
	}
	return out, nil
}

func historyOf(ctx context.Context, tc client.Client, id, run string) ([]*historypb.HistoryEvent, error) {
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
