package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRerunLostJobsAnnotation(t *testing.T) {
	for value, want := range map[string]int{"true": 1, "false": 0, "0": 0, "3": 3, "10": 10} {
		n, err := RerunLostJobs(map[string]string{RerunLostJobsAnnotation: value})
		require.NoError(t, err, value)
		require.Equal(t, want, n, value)
	}
	n, err := RerunLostJobs(nil)
	require.NoError(t, err)
	require.Zero(t, n, "off without the annotation")
	for _, bad := range []string{"11", "-1", "twice", ""} {
		_, err := RerunLostJobs(map[string]string{RerunLostJobsAnnotation: bad})
		require.ErrorContains(t, err, "arcflow.dev/rerun-lost-jobs", bad)
	}
}
