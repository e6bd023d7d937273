package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// An HRA with arcflow.dev/idle-runners: auto, a minute of one job a second,
// then quiet: the buffer rises from the pool's own rate and time to ready
// (shown in both statuses), later jobs start on warm runners, and a minute
// after the last job (scale-down delay 30 s) no runner is left. A second,
// slow pool of the same repository (a job every 15 s, scale-down delay 10 s)
// keeps its warm runner past its own delay while the first pool's jobs still
// come, and rests with the rest.
func TestWarmRunnersRiseWithTheJobsAndGoAtRest(t *testing.T) {
	parallelWithRoom(t, 4) // its buffer must keep ahead of its jobs: five neighbours on two saturated cores slowed runners past it, and three did twice in CI
	const ns = "warm-runners"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	load := world.SteadyPools{Pools: 2, Repository: "warm-org/app", MaxReplicas: 40, ScaleDownDelaySeconds: 30, IdleRunners: "auto"}
	pool, slow := load.PoolName(0), load.PoolName(1)
	w := startSimWorld(t, ctx, world.Config{Namespace: ns, RegisterDelay: 5 * time.Second, JobDuration: 3 * time.Second, Seed: 29})
	require.NoError(t, w.Apply(ctx, load.Manifest()))
	_, err := stack.Kubectl(ctx, "patch", "-n", ns, "hra", slow, "--type=merge", "-p", `{"spec":{"scaleDownDelaySecondsAfterScaleOut":10}}`)
	require.NoError(t, err)
	for _, name := range []string{pool, slow} {
		require.Eventually(t, func() bool {
			out, err := stack.JSONPath(ctx, ns, "hra", name, `{.status.conditions[?(@.type=="Accepted")].status}`)
			return err == nil && out == "True"
		}, time.Minute, 200*time.Millisecond, "the autoscaler of %s started", name)
	}

	jsonpathOf := func(kind, name, path string) string {
		out, _ := stack.JSONPath(ctx, ns, kind, name, "{"+path+"}")
		return out
	}
	jsonpath := func(kind, path string) string { return jsonpathOf(kind, pool, path) }
	warmOf := func(kind, name string) int { return warmRunners(ctx, ns, kind, name) }
	warm := func(kind string) int { return warmOf(kind, pool) }
	peak := 0
	var slowHeld []int // the slow pool's buffer 12-14 s after its last job
	start := time.Now()
	for i := range 60 {
		w.Queue(load.Repository, fmt.Sprintf("job-%d", i+1), []string{"self-hosted", "linux", pool})
		if i%15 == 0 && i <= 45 {
			w.Queue(load.Repository, fmt.Sprintf("slow-job-%d", i/15+1), []string{"self-hosted", "linux", slow})
		}
		if i >= 57 {
			slowHeld = append(slowHeld, warmOf("hra", slow))
		}
		peak = max(peak, warm("hra"))
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second)))
	}
	last := time.Now()
	for _, held := range slowHeld { // one or two, as its measured time to ready says
		require.Positive(t, held, "past its own 10 s delay, the slow pool keeps its warm runner while the scope is busy: %v", slowHeld)
	}
	require.Positive(t, peak, "a buffer rose")
	require.Positive(t, warm("rdeploy"), "the pool shows the buffer it keeps")
	ready, err := time.ParseDuration(jsonpath("hra", ".status.warm.timeToReady"))
	require.NoError(t, err)
	// What a warm runner's replacement takes: 5 s to register after Running,
	// plus the pod's start and arcflow's own reaction to the job, which grows
	// with the machine's load (16 s measured with both cores saturated).
	require.GreaterOrEqual(t, ready, 5*time.Second, "the pool's time to ready: 5 s to register after Running, and more")
	require.Less(t, ready, 30*time.Second, "the pool's time to ready: 5 s to register after Running, and more")
	t.Logf("peak warm %d, arrival rate %s, time to ready %v", peak, jsonpath("hra", ".status.warm.arrivalRate"), ready)

	var late []fakegithub.JobInfo
	require.Eventually(t, func() bool {
		late = late[:0]
		for _, j := range w.GitHub.Jobs() {
			if j.StartedAt.IsZero() {
				return false
			}
			if j.CreatedAt.After(start.Add(30 * time.Second)) {
				late = append(late, j)
			}
		}
		return true
	}, time.Minute, 200*time.Millisecond, "every job started")
	// A warm start is a job taken by a runner whose pod was made before the
	// job was queued: scaling on the job alone makes its pod after it. How
	// soon such jobs start is a figure of the machine's load (p50 1.77 s with
	// a lint beside CI), so it is logged, not asserted.
	created := map[string]time.Time{}
	for _, p := range w.Runners.PodTimes() {
		created[p.Name] = p.Created
	}
	var waits []time.Duration
	warmStarts := 0
	for _, j := range late {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
		if at, ok := created[j.RunnerName]; ok && at.Before(j.CreatedAt) {
			warmStarts++
		}
	}
	require.GreaterOrEqual(t, 2*warmStarts, len(late), "once the buffer is up, most jobs start on runners made before them: %d of %d", warmStarts, len(late))
	t.Logf("%d of %d jobs after the first 30 s started on runners made before them; queued -> started %v", warmStarts, len(late), world.PercentilesOf(waits))

	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 }, time.Until(last.Add(time.Minute)), 200*time.Millisecond,
		"no runner a minute after the last job")
	require.Eventually(t, func() bool { return warm("hra") == 0 && warmOf("hra", slow) == 0 }, 10*time.Second, 200*time.Millisecond,
		"the buffers are 0 at rest")
	require.Empty(t, w.Runners.Violations())
	t.Logf("no runner %v after the last job", time.Since(last).Round(time.Second))
}

// warmRunners is status.warm.runners of a pool or HRA, -1 while it has none.
func warmRunners(ctx context.Context, ns, kind, name string) int {
	out, _ := stack.JSONPath(ctx, ns, kind, name, "{.status.warm.runners}")
	n, err := strconv.Atoi(out)
	if err != nil {
		return -1
	}
	return n
}
