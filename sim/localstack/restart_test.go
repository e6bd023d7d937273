package localstack_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/sim/localstack"
)

// A dev server on its SQLite file comes back from a SIGKILL with its workflows;
// the shared in-memory one is refused, since it would come back empty.
func TestRestartTemporalKeepsWorkflowsOnADurableStore(t *testing.T) {
	ctx := testContext(t)
	require.ErrorContains(t, stack.RestartTemporal(ctx), "keeps its state in memory")

	durable, err := localstack.Start(ctx, localstack.Options{Temporal: true, TemporalDB: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, durable.Stop()) }()
	c, err := client.Dial(client.Options{HostPort: durable.TemporalAddress})
	require.NoError(t, err)
	defer c.Close()
	// No worker polls this queue: the workflow stays running through the restart.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "survives-restart", TaskQueue: "nobody"}, "Nothing")
	require.NoError(t, err)

	before := durable.PID("temporal")
	require.NoError(t, durable.RestartTemporal(ctx))
	require.NotEqual(t, before, durable.PID("temporal"), "a new server process")
	desc, err := c.DescribeWorkflowExecution(ctx, "survives-restart", run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
}
