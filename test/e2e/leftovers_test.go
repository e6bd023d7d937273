package e2e

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// endLeftoverWorkflows terminates every workflow that earlier tests left
// running on the package's dev server. All of them share one task queue, so a
// leftover's next task would reach this test's worker, which would act with
// this test's clients: a leftover runner's RemoveRunner by its GitHub ID, say,
// sent to this test's fake GitHub, where that ID is another runner's.
func endLeftoverWorkflows(t *testing.T, ctx context.Context) {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer tc.Close()
	ended := 0
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "ExecutionStatus = 'Running'", NextPageToken: token,
		})
		require.NoError(t, err, "list the workflows earlier tests left running")
		for _, e := range resp.GetExecutions() {
			id, run := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			err := tc.TerminateWorkflow(ctx, id, run, "left running by an earlier test")
			var gone *serviceerror.NotFound
			if !errors.As(err, &gone) {
				require.NoError(t, err, "terminate %s", id)
				ended++
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if ended > 0 {
		t.Logf("terminated %d workflows earlier tests left running", ended)
	}
}
