package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/internal/simworld"
)

// An HRA with arcflow.dev/idle-runners: auto, a minute of one job a second,
// then quiet: the buffer rises from the pool's own rate and time to ready
// (shown in both statuses), later jobs start on warm runners, and a minute
// after the last job (scale-down delay 30 s) no runner is left.
func TestWarmRunnersRiseWithTheJobsAndGoAtRest(t *testing.T) {
	const ns = "warm-runners"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	load := simworld.SteadyPools{Pools: 1, Repository: "warm-org/app", MaxReplicas: 40, ScaleDownDelaySeconds: 30, IdleRunners: "auto"}
	pool := load.PoolName(0)
	w := startSimWorld(t, ctx, simworld.Config{Namespace: ns, RegisterDelay: 5 * time.Second, JobDuration: 3 * time.Second, Seed: 29})
	require.NoError(t, w.Apply(ctx, load.Manifest()))
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(ctx, "get", "-n", ns, "hra", pool, "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	}, time.Minute, 200*time.Millisecond, "the autoscaler started")

	jsonpath := func(kind, path string) string {
		out, _ := stack.Kubectl(ctx, "get", "-n", ns, kind, pool, "-o", "jsonpath={"+path+"}")
		return out
	}
	warm := func(kind string) int {
		n, err := strconv.Atoi(jsonpath(kind, ".status.warm.runners"))
		if err != nil {
			return -1
		}
		return n
	}
	peak := 0
	start := time.Now()
	for i := range 60 {
		w.Queue(load.Repository, fmt.Sprintf("job-%d", i+1), []string{"self-hosted", "linux", pool})
		peak = max(peak, warm("hra"))
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second)))
	}
	last := time.Now()
	require.Positive(t, peak, "a buffer rose")
	require.Positive(t, warm("rdeploy"), "the pool shows the buffer it keeps")
	ready, err := time.ParseDuration(jsonpath("hra", ".status.warm.timeToReady"))
	require.NoError(t, err)
	require.InDelta(t, 5.5, ready.Seconds(), 2.5, "the pool's time to ready: 5 s to register after Running")
	t.Logf("peak warm %d, arrival rate %s, time to ready %v", peak, jsonpath("hra", ".status.warm.arrivalRate"), ready)

	var late []time.Duration
	require.Eventually(t, func() bool {
		late = late[:0]
		for _, j := range w.GitHub.Jobs() {
			if j.StartedAt.IsZero() {
				return false
			}
			if j.CreatedAt.After(start.Add(30 * time.Second)) {
				late = append(late, j.StartedAt.Sub(j.CreatedAt))
			}
		}
		return true
	}, time.Minute, 200*time.Millisecond, "every job started")
	waits := simworld.PercentilesOf(late)
	require.Less(t, waits.P50, 500*time.Millisecond, "once the buffer is up, jobs start on warm runners: %v", waits)

	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 }, time.Until(last.Add(time.Minute)), 200*time.Millisecond,
		"no runner a minute after the last job")
	require.Eventually(t, func() bool { return warm("hra") == 0 }, 10*time.Second, 200*time.Millisecond, "the buffer is 0 at rest")
	require.Empty(t, w.Runners.Violations())
	t.Logf("queued -> started after the first 30 s: %v; no runner %v after the last job", waits, time.Since(last).Round(time.Second))
}
