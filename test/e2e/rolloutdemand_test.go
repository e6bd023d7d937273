package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// heldCountManifest is the full-path pool with room for 100 runners and a
// scale-down delay longer than the test: after a burst, the autoscaler holds
// its desired count at the burst's size while the jobs need far fewer.
var heldCountManifest = strings.NewReplacer("maxReplicas: 4", "maxReplicas: 100",
	"scaleDownDelaySecondsAfterScaleOut: 5", "scaleDownDelaySecondsAfterScaleOut: 600").Replace(fullpath.RunnerDeployment)

// Issue 37's rollout, as a new user met it: a burst of short jobs has just
// finished (the autoscaler holds its count at 40 for the scale-down delay),
// 10 jobs of 60 s run, and the RunnerDeployment's template changes while they
// do. The rollout is sized by the demand (10), not by the held count, and a
// busy old ephemeral runner serves its job and leaves by itself: no new pod is
// created for jobs that already run, so 10 pods at most and none created
// after the change. (Sized by the held count, its surge limit was 60, and 10
// new pods came up beside the 10 busy ones, to be removed unused.)
func TestARolloutWhileTheCountIsHeldCreatesNoPodNobodyNeeds(t *testing.T) {
	parallel(t)
	const ns, burst, jobs = "rollout-demand", 40, 10
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 37,
		JobDurations: func(j fakegithub.JobInfo) time.Duration {
			if strings.HasPrefix(j.Name, "burst-") {
				return time.Second
			}
			return 60 * time.Second
		},
	})
	tc := dialTemporal(t, ns)
	require.NoError(t, w.Apply(ctx, heldCountManifest))
	pool := contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "app")
	require.Eventually(t, func() bool { return world.PoolAtZero(ctx, tc, pool) }, 60*time.Second, 100*time.Millisecond)

	for i := range burst {
		w.Queue("octo-org/app", fmt.Sprintf("burst-%d", i), buildLabels)
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("completed") == burst && w.Runners.LivePods() == 0 },
		2*time.Minute, 100*time.Millisecond, "the burst ran and its runners exited")
	for i := range jobs {
		w.Queue("octo-org/app", fmt.Sprintf("long-%d", i), buildLabels)
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress") == jobs }, 60*time.Second, 100*time.Millisecond, "the long jobs run")
	var state workflows.PoolState
	value, err := tc.QueryWorkflow(ctx, pool, "", contract.QueryState)
	require.NoError(t, err)
	require.NoError(t, value.Get(&state))
	require.NotNil(t, state.Scale)
	// The count held is the burst's peak of queued jobs: all 40 at once on a
	// quiet machine; on a loaded one the first jobs may end before the last
	// deliveries arrive. Either way it is far above what the jobs need.
	held := state.Scale.Replicas
	require.GreaterOrEqual(t, held, 2*jobs, "the autoscaler holds the burst's count")
	require.Equal(t, jobs, state.Scale.Demanded(), "while the jobs need 10")
	t.Cleanup(func() {
		if t.Failed() { // the pool's decisions, for whoever reads the failure
			out, _ := temporalCLI(context.Background(), ns, "workflow", "show", "--output", "json", "--workflow-id", pool)
			path := filepath.Join(os.TempDir(), "rollout-demand-pool-history.json")
			t.Logf("pool history in %s: %v; pool state before the change: %+v", path, os.WriteFile(path, []byte(out), 0o644), state)
		}
	})

	podsBefore := len(w.Runners.PodTimes())
	peak := world.TrackPeak(ctx, 20*time.Millisecond, w.Runners.LivePods)
	out, err := stack.Kubectl(ctx, "patch", "-n", ns, "rdeploy", "app", "--type=merge",
		"-p", `{"spec":{"template":{"spec":{"env":[{"name":"ROLLOUT","value":"2"}]}}}}`)
	require.NoError(t, err, out)
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("completed") == burst+jobs }, 2*time.Minute, 100*time.Millisecond, "the long jobs complete")
	highest, created := peak(), len(w.Runners.PodTimes())-podsBefore
	t.Logf("held count %d, demand %d, template changed: %d runner pods live at peak, %d created after the change", held, jobs, highest, created)
	require.Empty(t, w.Runners.Violations(), "no busy runner's pod was deleted")
	require.LessOrEqual(t, highest, jobs, "no pod beside the busy ones")
	require.Zero(t, created, "no new runner for jobs that already run")
}
