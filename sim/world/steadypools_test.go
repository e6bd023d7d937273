package world

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

func TestSteadyPoolsLoad(t *testing.T) {
	load := SteadyPools{Pools: 4, Repository: "o/r", Rate: 2000, Jobs: 400, MinDuration: 2 * time.Second, MaxDuration: 30 * time.Second,
		MaxReplicas: 5, ScaleDownDelaySeconds: 30, Seed: 1}
	require.Equal(t, 8, strings.Count(load.Manifest(), "kind: "), "a RunnerDeployment and an HRA per pool")
	require.Equal(t, "pool-03", load.PoolOf("pool-03-x1abc"))
	require.Empty(t, load.PoolOf("other-x1abc"))
	require.NotContains(t, load.Manifest(), "idle-runners")
	load.IdleRunners = "auto"
	require.Equal(t, 4, strings.Count(load.Manifest(), `arcflow.dev/idle-runners: "auto"`), "on every HRA")

	perPool := map[string]int{}
	require.NoError(t, load.Queue(context.Background(), func(repo, _ string, labels []string) {
		require.Equal(t, "o/r", repo)
		perPool[labels[len(labels)-1]]++
	}))
	require.Greater(t, perPool["pool-00"], 2*perPool["pool-03"], "the first pool is hot")
	require.Positive(t, perPool["pool-03"])

	var shortest, longest time.Duration = time.Hour, 0
	for id := range int64(500) {
		d := load.JobDuration(fakegithub.JobInfo{ID: id})
		shortest, longest = min(shortest, d), max(longest, d)
		require.Equal(t, d, load.JobDuration(fakegithub.JobInfo{ID: id}), "fixed per job")
	}
	require.GreaterOrEqual(t, shortest, 2*time.Second)
	require.LessOrEqual(t, longest, 30*time.Second)
	require.Less(t, shortest, 3*time.Second, "spread over the range")
	require.Greater(t, longest, 20*time.Second)
}
