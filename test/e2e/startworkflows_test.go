package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// StartWorkflows against a real Temporal: every workflow starts once with its
// memo and search attributes, and a retry of the same starts (the activity's
// next attempt) neither fails nor starts a runner twice, whether the first run is
// still running or already closed.
func TestStartWorkflowsStartsEachWorkflowOnce(t *testing.T) {
	parallel(t)
	const ns = "start-workflows"
	ctx := testContext(t)
	useTemporalNamespace(t, ctx, ns)
	tc := dialTemporal(t, ns)
	const queue = "start-workflows-e2e"
	w := sdkworker.New(tc, queue, sdkworker.Options{})
	// A stand-in that ends on a signal; the activity knows workflows by name only.
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, in map[string]string) (string, error) {
		workflow.GetSignalChannel(ctx, "end").Receive(ctx, nil)
		return in["name"], nil
	}, workflow.RegisterOptions{Name: "StartWorkflowsProbe"})
	require.NoError(t, w.Start())
	defer w.Stop()

	var starts []activities.WorkflowStart
	for i := range 3 {
		input, err := json.Marshal(map[string]string{"name": fmt.Sprint(i)})
		require.NoError(t, err)
		starts = append(starts, activities.WorkflowStart{
			ID: fmt.Sprintf("start-workflows-e2e/%d", i), Type: "StartWorkflowsProbe", TaskQueue: queue, Input: input,
			Memo: map[string]any{"pod": fmt.Sprint(i)}, Keywords: map[string]string{contract.SearchAttrKind.GetName(): "probe"},
		})
	}
	a := &activities.Workflows{Client: tc}
	require.NoError(t, a.StartWorkflows(ctx, starts))
	runs := map[string]string{}
	for _, s := range starts {
		desc, err := tc.DescribeWorkflowExecution(ctx, s.ID, "")
		require.NoError(t, err)
		runs[s.ID] = desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		require.Contains(t, desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields(), contract.SearchAttrKind.GetName())
		require.Contains(t, desc.GetWorkflowExecutionInfo().GetMemo().GetFields(), "pod")
	}

	// The first ends; the retry must not start it again, nor the running ones.
	require.NoError(t, tc.SignalWorkflow(ctx, starts[0].ID, "", "end", nil))
	var out string
	require.NoError(t, tc.GetWorkflow(ctx, starts[0].ID, "").Get(ctx, &out))
	require.Equal(t, "0", out)
	require.NoError(t, a.StartWorkflows(ctx, starts), "a retry of the same starts succeeds")
	for _, s := range starts {
		desc, err := tc.DescribeWorkflowExecution(ctx, s.ID, "")
		require.NoError(t, err)
		require.Equal(t, runs[s.ID], desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "%s was not started again", s.ID)
	}
	for _, s := range starts[1:] {
		require.NoError(t, tc.SignalWorkflow(ctx, s.ID, "", "end", nil))
	}
}
