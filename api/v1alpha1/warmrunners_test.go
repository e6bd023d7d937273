package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIdleRunnersSetting(t *testing.T) {
	hra := func(value string) *HorizontalRunnerAutoscaler {
		return &HorizontalRunnerAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{IdleRunnersAnnotation: value}}}
	}
	for value, want := range map[string]IdleRunnersSetting{
		"0": {}, "3": {Fixed: 3}, "auto": {Auto: true}, "auto,max=20": {Auto: true, Max: 20}, "auto, max=1": {Auto: true, Max: 1},
	} {
		got, err := hra(value).IdleRunnersSetting()
		require.NoError(t, err, value)
		require.Equal(t, want, got, value)
	}
	for _, bad := range []string{"auto,max=0", "auto,max=-1", "auto,min=2", "auto,max", "auto,max=2,max=3", "Auto", "automatic", "-2"} {
		_, err := hra(bad).IdleRunnersSetting()
		require.ErrorContains(t, err, IdleRunnersAnnotation, bad)
		require.ErrorContains(t, err, `"auto,max=K"`, "the error says what is accepted")
	}
	n, err := hra("auto,max=5").IdleRunners()
	require.NoError(t, err)
	require.Zero(t, n, "auto is no fixed buffer")
}

func TestFormatArrivalRate(t *testing.T) {
	require.Equal(t, "60.0/min", FormatArrivalRate(1))
	require.Equal(t, "1.0/min", FormatArrivalRate(1.0/60))
	require.Equal(t, "0.0/min", FormatArrivalRate(0))
}
