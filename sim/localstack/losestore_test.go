package localstack_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/sim/localstack"
)

// A lost store comes back empty on the same address, with the namespace and the
// search attributes start-dev's flags create; the in-memory server, which has no
// store to lose, is refused.
func TestLoseTemporalStoreForgetsEveryWorkflowAndKeepsTheSearchAttributes(t *testing.T) {
	ctx := testContext(t)
	require.ErrorContains(t, stack.LoseTemporalStore(ctx), "keeps its state in memory")

	durable, err := localstack.Start(ctx, localstack.Options{Temporal: true, TemporalDB: true,
		SearchAttributes: map[string]string{"LostStoreKind": "Keyword"}})
	require.NoError(t, err)
	defer func() { require.NoError(t, durable.Stop()) }()
	c, err := client.Dial(client.Options{HostPort: durable.TemporalAddress})
	require.NoError(t, err)
	defer c.Close()
	// No worker polls this queue: the workflow would stay running through a restart.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "lost-with-the-store", TaskQueue: "nobody"}, "Nothing")
	require.NoError(t, err)

	before := durable.PID("temporal")
	require.NoError(t, durable.LoseTemporalStore(ctx))
	require.NotEqual(t, before, durable.PID("temporal"), "a new server process")
	_, err = c.DescribeWorkflowExecution(ctx, "lost-with-the-store", run.GetRunID())
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "the workflow went with the store")

	attrs, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, attrs.GetCustomAttributes()["LostStoreKind"], "the search attribute exists again")
}
