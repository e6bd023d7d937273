package v1alpha1

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScaleSetAnnotations(t *testing.T) {
	ref, ok, err := ScaleSetOf(map[string]string{ScaleSetAnnotation: "arc-linux", ScaleSetRunnerGroupAnnotation: "ci"}, true)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, ScaleSetRef{Name: "arc-linux", RunnerGroup: "ci"}, ref)

	_, ok, err = ScaleSetOf(nil, true)
	require.NoError(t, err)
	require.False(t, ok, "no annotation, no set")

	for name, annotations := range map[string]map[string]string{
		"a space in the name":      {ScaleSetAnnotation: "arc linux"},
		"an empty name":            {ScaleSetAnnotation: ""},
		"a group without a set":    {ScaleSetRunnerGroupAnnotation: "ci"},
		"a name of 101 characters": {ScaleSetAnnotation: strings.Repeat("b", 101)},
	} {
		_, _, err := ScaleSetOf(annotations, true)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "annotation", name)
	}
	_, _, err = ScaleSetOf(map[string]string{ScaleSetAnnotation: "arc-linux"}, false)
	require.ErrorContains(t, err, "ephemeral", "a scale set's runners are ephemeral")
}
