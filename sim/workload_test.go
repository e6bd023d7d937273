package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type queued struct {
	repo, name string
	labels     []string
	at         time.Time
}

func TestWorkloadSpreadsJobsOverRepositoriesAndLabelSets(t *testing.T) {
	var got []queued
	w := Workload{Jobs: 5, Repositories: []string{"a/one", "b/two"}, LabelSets: [][]string{{"linux"}, {"linux", "gpu"}, {"arm64"}}}
	require.NoError(t, w.Run(context.Background(), func(repo, name string, labels []string) {
		got = append(got, queued{repo: repo, name: name, labels: labels})
	}))
	require.Len(t, got, 5)
	require.Equal(t, []string{"a/one", "b/two", "a/one", "b/two", "a/one"}, []string{got[0].repo, got[1].repo, got[2].repo, got[3].repo, got[4].repo})
	require.Equal(t, []string{"arm64"}, got[2].labels)
	require.Equal(t, []string{"linux", "gpu"}, got[4].labels)
	require.Equal(t, "job-5", got[4].name)
}

func TestWorkloadPacesASteadyRate(t *testing.T) {
	var got []queued
	w := Workload{Jobs: 5, Rate: 50, Repositories: []string{"a/one"}, LabelSets: [][]string{{"linux"}}}
	start := time.Now()
	require.NoError(t, w.Run(context.Background(), func(repo, name string, labels []string) {
		got = append(got, queued{at: time.Now()})
	}))
	// 5 jobs at 50/s: the last is due 80 ms after the first.
	require.GreaterOrEqual(t, got[4].at.Sub(start), 80*time.Millisecond)
}

func TestWorkloadStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	w := Workload{Jobs: 100, Rate: 10, Repositories: []string{"a/one"}, LabelSets: [][]string{{"linux"}}}
	err := w.Run(ctx, func(string, string, []string) {
		n++
		if n == 2 {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 2, n)
}

func TestWorkloadRejectsBadInput(t *testing.T) {
	require.ErrorContains(t, Workload{Jobs: 1, LabelSets: [][]string{{"x"}}}.Validate(), "no repositories")
	require.ErrorContains(t, Workload{Jobs: 1, Repositories: []string{"a/b"}}.Validate(), "no label sets")
	require.ErrorContains(t, Workload{Jobs: -1, Repositories: []string{"a/b"}, LabelSets: [][]string{{"x"}}}.Validate(), "negative")
}
