package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIdleRunnersAnnotation(t *testing.T) {
	hra := func(annotations map[string]string) *HorizontalRunnerAutoscaler {
		return &HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	n, err := hra(nil).IdleRunners()
	require.NoError(t, err)
	require.Zero(t, n, "an ARC manifest keeps no buffer")
	n, err = hra(map[string]string{IdleRunnersAnnotation: "2"}).IdleRunners()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for _, bad := range []string{"-1", "two", "1.5", ""} {
		_, err := hra(map[string]string{IdleRunnersAnnotation: bad}).IdleRunners()
		require.ErrorContains(t, err, IdleRunnersAnnotation, bad)
	}
}

func TestPriorityAnnotation(t *testing.T) {
	hra := func(annotations map[string]string) *HorizontalRunnerAutoscaler {
		return &HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	n, err := hra(nil).Priority()
	require.NoError(t, err)
	require.Zero(t, n, "an ARC manifest has priority 0")
	n, err = hra(map[string]string{PriorityAnnotation: "-5"}).Priority()
	require.NoError(t, err)
	require.Equal(t, -5, n)
	for _, bad := range []string{"high", "1.5", ""} {
		_, err := hra(map[string]string{PriorityAnnotation: bad}).Priority()
		require.ErrorContains(t, err, PriorityAnnotation, bad)
	}
}

func TestJITConfigAnnotation(t *testing.T) {
	jit, err := JITConfig(nil, true)
	require.NoError(t, err)
	require.False(t, jit, "an ARC manifest registers with tokens")
	jit, err = JITConfig(map[string]string{JITConfigAnnotation: "true"}, true)
	require.NoError(t, err)
	require.True(t, jit)
	_, err = JITConfig(map[string]string{JITConfigAnnotation: "true"}, false)
	require.ErrorContains(t, err, "ephemeral")
	_, err = JITConfig(map[string]string{JITConfigAnnotation: "yes please"}, true)
	require.ErrorContains(t, err, JITConfigAnnotation)
}
