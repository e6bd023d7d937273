package world

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func TestWithIdleRunnersAnnotatesTheHRA(t *testing.T) {
	manifest := "kind: HorizontalRunnerAutoscaler\nmetadata:\n  name: app\nspec:\n  maxReplicas: 4\n"
	var hra v1alpha1.HorizontalRunnerAutoscaler
	require.NoError(t, yaml.Unmarshal([]byte(WithIdleRunners(manifest, "app", 2)), &hra))
	n, err := hra.IdleRunners()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, "app", hra.Name)
	require.Equal(t, manifest, WithIdleRunners(manifest, "other", 2), "another HRA's manifest is left alone")
}

func TestWithJITConfigAnnotatesTheRunnerDeployment(t *testing.T) {
	manifest := "kind: RunnerDeployment\nmetadata:\n  name: app\nspec:\n  replicas: 0\n"
	var rd v1alpha1.RunnerDeployment
	require.NoError(t, yaml.Unmarshal([]byte(WithJITConfig(manifest, "app")), &rd))
	jit, err := v1alpha1.JITConfig(rd.Annotations, true)
	require.NoError(t, err)
	require.True(t, jit)
	require.Equal(t, manifest, WithJITConfig(manifest, "other"), "another pool's manifest is left alone")
}

func TestWebhookHRATargetsItsPool(t *testing.T) {
	for _, kind := range []string{v1alpha1.KindRunnerDeployment, v1alpha1.KindRunnerSet} {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		require.NoError(t, yaml.Unmarshal([]byte(WebhookHRA("app", kind, 4, 5)), &hra))
		require.Equal(t, "app", hra.Spec.ScaleTargetRef.Name)
		require.Equal(t, kind, hra.Spec.TargetKind())
		require.Equal(t, 4, *hra.Spec.MaxReplicas)
		require.NoError(t, hra.Validate())
		_, ok := hra.Spec.WorkflowJobTrigger()
		require.True(t, ok)
	}
}
