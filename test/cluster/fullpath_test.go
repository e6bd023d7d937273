package cluster

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

func TestFullPathOnTemporalClusterWithPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local stack with a Temporal cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	requireClusterShape(t, ctx)

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	bin, err := world.BuildArcflow(ctx, root, t.TempDir())
	require.NoError(t, err)
	const ns, name = "cluster-rd", "app"
	result := fullpath.Run(t, fullpath.Config{
		Stack: stack, RepoRoot: root, Binary: bin, Namespace: ns, Manifest: fullpath.RunnerDeployment, Name: name,
	})
	require.NotEmpty(t, result.RunnerPods)

	// PostgreSQL visibility finds every runner of the pool by arcflow's search
	// attributes, each workflow completed. Visibility is written asynchronously
	// after a workflow closes, so wait for it.
	var want []string
	for _, pod := range result.RunnerPods {
		want = append(want, contract.RunnerWorkflowID(ns, pod))
	}
	slices.Sort(want)
	query := `ArcflowKind = "runner" AND ArcflowPool = "` + ns + `/` + name + `"`
	var listed []listedWorkflow
	require.Eventually(t, func() bool {
		listed = listWorkflows(t, ctx, query)
		return slices.Equal(workflowIDs(listed), want) && allCompleted(listed)
	}, 30*time.Second, 250*time.Millisecond, "temporal workflow list --query %q finds the runners %v", query, want)
	t.Logf("visibility lists %d runner workflows of %s/%s, all completed", len(listed), ns, name)
}

// requireClusterShape checks that the stack's Temporal is the cluster this package
// is about, not a dev server: PostgreSQL for both stores and several shards.
func requireClusterShape(t *testing.T, ctx context.Context) {
	c, err := client.Dial(client.Options{HostPort: stack.TemporalAddress})
	require.NoError(t, err)
	defer c.Close()
	info, err := c.WorkflowService().GetClusterInfo(ctx, &workflowservice.GetClusterInfoRequest{})
	require.NoError(t, err)
	require.Equal(t, "postgres12", info.GetPersistenceStore())
	require.Equal(t, "postgres12", info.GetVisibilityStore())
	require.GreaterOrEqual(t, info.GetHistoryShardCount(), int32(4))
	t.Logf("Temporal %s: persistence %s, visibility %s, %d history shards",
		info.GetServerVersion(), info.GetPersistenceStore(), info.GetVisibilityStore(), info.GetHistoryShardCount())
}

// listedWorkflow is the part of `temporal workflow list --output json` read here.
type listedWorkflow struct {
	Execution struct {
		WorkflowID string `json:"workflowId"`
	} `json:"execution"`
	Status string `json:"status"`
}

// listWorkflows runs the temporal CLI against the stack, as an operator would. It
// reads a JSON array or a stream of JSON objects.
func listWorkflows(t *testing.T, ctx context.Context, query string) []listedWorkflow {
	out, err := stack.Temporal(ctx, "workflow", "list", "--query", query, "--output", "json")
	require.NoError(t, err)
	var listed []listedWorkflow
	if strings.HasPrefix(strings.TrimSpace(out), "[") {
		require.NoError(t, json.Unmarshal([]byte(out), &listed), "temporal workflow list output: %s", out)
		return listed
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var w listedWorkflow
		require.NoError(t, dec.Decode(&w), "temporal workflow list output: %s", out)
		listed = append(listed, w)
	}
	return listed
}

func workflowIDs(listed []listedWorkflow) []string {
	ids := make([]string, 0, len(listed))
	for _, w := range listed {
		ids = append(ids, w.Execution.WorkflowID)
	}
	slices.Sort(ids)
	return ids
}

func allCompleted(listed []listedWorkflow) bool {
	for _, w := range listed {
		if !strings.EqualFold(strings.TrimPrefix(w.Status, "WORKFLOW_EXECUTION_STATUS_"), "completed") {
			return false
		}
	}
	return true
}
