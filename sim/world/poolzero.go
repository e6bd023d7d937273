package world

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// PoolAtZero says whether a pool has heard its autoscaler ask for zero runners
// and holds none. Until the autoscaler first speaks, a pool runs its resource's
// own replicas (1 when a manifest leaves them out, as ARC's do): a pod of that
// runner can appear after the autoscaler's status already says 0 and no pod
// exists yet, so only the pool's own state says the start line is clean.
func PoolAtZero(ctx context.Context, tc client.Client, poolWorkflowID string) bool {
	value, err := tc.QueryWorkflow(ctx, poolWorkflowID, "", contract.QueryState)
	if err != nil {
		return false
	}
	var state workflows.PoolState
	if value.Get(&state) != nil {
		return false
	}
	return state.Scale != nil && state.Desired() == 0 && len(state.Runners) == 0
}
