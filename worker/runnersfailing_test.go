package worker

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRunnersFailingConditionFollowsThePoolStatus(t *testing.T) {
	pool := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "app", "generation": int64(2)}, "status": status}}
	}
	_, ok := runnersFailingCondition(pool(map[string]any{"failingRunners": int64(0), "lastRunnerFailure": ""}))
	require.False(t, ok, "no condition for a pool that never failed")

	c, ok := runnersFailingCondition(pool(map[string]any{"failingRunners": int64(3), "lastRunnerFailure": "pod-failed"}))
	require.True(t, ok)
	require.Equal(t, metav1.ConditionTrue, c.Status)
	require.Equal(t, "PodFailed", c.Reason)
	require.Contains(t, c.Message, "3 runner(s) in a row")
	require.Equal(t, int64(2), c.ObservedGeneration)

	recovered := pool(map[string]any{"failingRunners": int64(0), "conditions": []any{
		map[string]any{"type": runnersFailing, "status": "True", "reason": "PodFailed"},
	}})
	c, ok = runnersFailingCondition(recovered)
	require.True(t, ok, "a pool that was failing says it recovered")
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, "RunnerRegistered", c.Reason)
	require.Equal(t, "True", conditionStatus(recovered, runnersFailing))
	require.Equal(t, "RegistrationTimeout", conditionReason("registration-timeout"))
}
