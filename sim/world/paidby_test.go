package world

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPaidBySplitsActionsByWorkflowKind(t *testing.T) {
	require.Equal(t, "autoscaler", WorkflowKind("hra/ci/app"))
	require.Equal(t, "pool", WorkflowKind("pool/ci/runnerdeployment/app"))
	require.Equal(t, "runner", WorkflowKind("runner/ci/app-x"))
	by := map[string]Actions{
		"runner":     {WorkflowStarts: 10, Signals: 20},
		"pool":       {Activities: 5},
		"autoscaler": {Signals: 10, Timers: 5},
	}
	require.Equal(t, "runner 3.00 (1.00 workflow starts, 2.00 signals); autoscaler 1.50 (1.00 signals, 0.50 timers); pool 0.50 (0.50 activities)",
		PaidBy(by, 10))
}
