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
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// rollingUpdateManifest is the full-path RunnerDeployment and HRA with room
// for 20 runners, so the rollout's surge, not maxReplicas, is the limit, and a
// scale-down delay longer than the test, which holds the count at 10 between
// its two waves of jobs.
var rollingUpdateManifest = strings.NewReplacer("maxReplicas: 4", "maxReplicas: 20",
	"scaleDownDelaySecondsAfterScaleOut: 5", "scaleDownDelaySecondsAfterScaleOut: 120").Replace(fullpath.RunnerDeployment)

// A template change while every runner of a webhook-scaled pool runs a job
// rolls the pool within its surge (issue 25): desired 10, so at most 15 runner
// pods at once. The old jobs complete as ten new jobs queue, and the old
// runners take 4 s to exit, as real ones do; before surge-counts-draining the
// pool counted the surge only while an old runner was not yet finishing, and
// created five more new runners beside the ten exiting ones.
func TestARollingUpdateOfBusyRunnersStaysWithinItsSurge(t *testing.T) {
	parallel(t)
	const ns, jobs = "rolling-update", 10
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond,
		JobDuration: 15 * time.Second, ExitDelay: 4 * time.Second, Seed: 1,
	})
	tc := dialTemporal(t, ns)
	pool := contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "app")
	t.Cleanup(func() {
		if t.Failed() { // the pool's decisions, for whoever reads the failure
			out, _ := temporalCLI(context.Background(), ns, "workflow", "show", "--output", "json", "--workflow-id", pool)
			path := filepath.Join(os.TempDir(), "rolling-update-pool-history.json")
			t.Logf("pool history in %s: %v", path, os.WriteFile(path, []byte(out), 0o644))
		}
	})
	require.Contains(t, rollingUpdateManifest, "maxReplicas: 20")
	require.Contains(t, rollingUpdateManifest, "scaleDownDelaySecondsAfterScaleOut: 120")
	require.NoError(t, w.Apply(ctx, rollingUpdateManifest))
	require.Eventually(t, func() bool { return world.PoolAtZero(ctx, tc, pool) }, 60*time.Second, 100*time.Millisecond,
		"the pool settles at minReplicas 0")

	queue := func(wave string) {
		for i := range jobs {
			w.Queue("octo-org/app", fmt.Sprintf("%s-%d", wave, i), []string{"self-hosted", "linux", "build"})
		}
	}
	count := func(status string) int {
		n := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == status {
				n++
			}
		}
		return n
	}
	queue("first")
	require.Eventually(t, func() bool { return count("in_progress") == jobs }, 60*time.Second, 20*time.Millisecond, "every job runs")
	peak := world.TrackPeak(ctx, 20*time.Millisecond, w.Runners.LivePods)
	out, err := stack.Kubectl(ctx, "patch", "-n", ns, "rdeploy", "app", "--type=merge",
		"-p", `{"spec":{"template":{"spec":{"env":[{"name":"ROLLOUT","value":"2"}]}}}}`)
	require.NoError(t, err, out)

	// The first wave completes; its runners exit 4 s later. The second wave
	// queues in between, once the autoscaler has released the first wave's
	// reservations: a queued delivery applied before a completion would raise
	// the desired count, and the surge with it.
	require.Eventually(t, func() bool { return count("completed") == jobs }, 60*time.Second, 20*time.Millisecond, "the first wave completes")
	hra := contract.AutoscalerWorkflowID(ns, "app")
	require.Eventually(t, func() bool {
		var state workflows.AutoscalerState
		value, err := tc.QueryWorkflow(ctx, hra, "", contract.QueryState)
		return err == nil && value.Get(&state) == nil && len(state.Reservations.Active) == 0
	}, 3*time.Second, 20*time.Millisecond, "the autoscaler released the first wave")
	queue("second")
	require.Eventually(t, func() bool { return count("completed") == 2*jobs }, 90*time.Second, 100*time.Millisecond, "the second wave completes")
	highest := peak()

	limit := jobs + (jobs+1)/2
	t.Logf("%d busy runners, template patched, %d more jobs as they finished: %d runner pods live at peak (limit %d); %d pods created in all",
		jobs, jobs, highest, limit, len(w.Runners.PodTimes()))
	require.Empty(t, w.Runners.Violations(), "no busy runner's pod was deleted")
	require.Zero(t, w.Runners.Interrupted(), "no job was interrupted")
	require.LessOrEqual(t, highest, limit, "the rollout stays within desired + surge")
	require.Greater(t, highest, jobs, "the rollout surged: new runners came up beside the busy old ones")
}
