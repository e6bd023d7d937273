package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func TestPoolStatusPatchRemovesAWarmStatusLeftBehind(t *testing.T) {
	patch, err := poolStatusPatch(PoolStatus{Desired: 2, Warm: v1alpha1.PoolWarmStatus{Runners: 3, IdleRunnerSeconds: 40}})
	require.NoError(t, err)
	require.Contains(t, string(patch), `"warm":{"idleRunnerSeconds":40,"runners":3}`)
	patch, err = poolStatusPatch(PoolStatus{Desired: 2})
	require.NoError(t, err)
	require.Contains(t, string(patch), `"warm":null`, "no auto buffer: none left in the status")
	require.Contains(t, string(patch), `"desiredReplicas":2`)
}
