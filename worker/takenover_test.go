package worker

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRunnersTakenOverConditionFollowsThePoolStatus(t *testing.T) {
	pool := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "app", "generation": int64(3)}, "status": status}}
	}
	_, ok := runnersTakenOverCondition(pool(map[string]any{"takenOverRunners": int64(0)}))
	require.False(t, ok, "no condition for a pool that never took a runner over")

	taking := pool(map[string]any{"takenOverRunners": int64(10)})
	c, ok := runnersTakenOverCondition(taking)
	require.True(t, ok)
	require.Equal(t, metav1.ConditionTrue, c.Status)
	require.Contains(t, c.Message, "10 runner(s) the pool took over")
	require.Equal(t, int64(3), c.ObservedGeneration)

	ended := pool(map[string]any{"takenOverRunners": int64(0), "conditions": []any{
		map[string]any{"type": runnersTakenOver, "status": "True", "reason": "RunnersRunning"},
	}})
	c, ok = runnersTakenOverCondition(ended)
	require.True(t, ok, "a pool whose runners taken over all ended says so")
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, "AllEnded", c.Reason)
	require.True(t, takenOverChanged(taking, ended))
	require.False(t, takenOverChanged(ended, pool(map[string]any{})))
}
