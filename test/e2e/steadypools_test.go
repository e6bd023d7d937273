package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// steadyLoad is issue 27's load, shortened to fit make test: ten pools of one
// repository, a few much busier than the rest, jobs arriving continuously at
// 2 per second and running 2 to 30 s, on runners that take 10 s from pod
// Running to registered, as production runners do.
var steadyLoad = world.SteadyPools{
	Pools: 10, Repository: "steady-org/app", Rate: 2, Jobs: 100,
	MinDuration: 2 * time.Second, MaxDuration: 30 * time.Second,
	MaxReplicas: 20, ScaleDownDelaySeconds: 30, Seed: 27,
}

// Under a steady load no job loses its runner, no busy pod is deleted, and no
// pool stops a runner while one of its jobs is still queued: a completion's
// runner is known to be finishing, and a runner asked to stop before it
// registered is not deleted while a registration can still land.
func TestASteadyLoadOverManyPoolsInterruptsNothingAndStopsNoRunnerAJobNeeds(t *testing.T) {
	parallel(t)
	const ns = "steady-pools"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, RegisterDelay: 10 * time.Second, JobDurations: steadyLoad.JobDuration, Seed: 27,
	})
	require.NoError(t, w.Apply(ctx, steadyLoad.Manifest()))
	require.Eventually(t, func() bool {
		out, _ := stack.JSONPath(ctx, ns, "hra", "", "{range .items[*]}{.status.desiredReplicas}{end}")
		return out == "0000000000"
	}, 60*time.Second, 200*time.Millisecond, "every autoscaler runs before the jobs come")

	require.NoError(t, steadyLoad.Queue(ctx, w.Queue))
	require.Eventually(t, func() bool {
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" {
				done++
			}
		}
		return done == steadyLoad.Jobs
	}, 3*time.Minute, 500*time.Millisecond, "every job ran")
	end := time.Now()

	tc := dialTemporal(t, ns)
	outcome, err := world.MeasureSteady(ctx, tc, w, steadyLoad, end)
	require.NoError(t, err)
	t.Logf("steady load, 10 pools, registration after 10 s: %v", outcome)
	require.Equal(t, steadyLoad.Jobs, outcome.Jobs)
	require.Zero(t, outcome.Interrupted, "jobs interrupted")
	require.Empty(t, outcome.BusyPodsDeleted, "busy pods deleted")
	require.Equal(t, steadyLoad.Jobs, outcome.Succeeded)
	require.Zero(t, outcome.StopsWhileQueued, "scale-down stops while the pool had a queued job")

	untold, signalled, err := world.ReadyUntoldRunners(ctx, tc, ns)
	require.NoError(t, err)
	t.Logf("%d runners with ready-untold pods, %d of them signalled while their pods ran", untold, signalled)
	require.Greater(t, untold, steadyLoad.Jobs/2, "runners told their starts have ready-untold pods")
	require.Zero(t, signalled, "their pods' start and readiness are not signalled")
}
