package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A scale set's pool with arcflow.dev/idle-runners: auto: the jobs the
// service assigns are its arrivals, so 20 s of one job a second raises a
// buffer (in the HRA's status) from the set's own rate and time to ready,
// with no webhook; once the jobs stop, the pool goes back to nothing.
func TestAScaleSetsPoolKeepsAnAutoBuffer(t *testing.T) {
	parallelWithRoom(t, 2) // it measures a rate and a time to ready, as the webhook's warm test does
	const ns = "scaleset-warm"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 2 * time.Second, JobDuration: 3 * time.Second, Seed: 53,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second},
	})
	t.Cleanup(func() {
		if t.Failed() {
			st, _ := temporalCLI(context.Background(), ns, "workflow", "query", "--workflow-id", contract.AutoscalerWorkflowID(ns, "app"), "--type", "state")
			t.Logf("autoscaler state:\n%s", st)
		}
	})
	manifest := strings.Replace(scaleSetManifest, "  name: app\nspec:\n  scaleTargetRef:",
		"  name: app\n  annotations:\n    arcflow.dev/idle-runners: auto\nspec:\n  scaleTargetRef:", 1)
	manifest = strings.Replace(manifest, "maxReplicas: 4", "maxReplicas: 30", 1)
	// The buffer lasts the scale-down delay after the last job: long enough
	// to be seen on a loaded machine.
	manifest = strings.Replace(manifest, "scaleDownDelaySecondsAfterScaleOut: 5", "scaleDownDelaySecondsAfterScaleOut: 10", 1)
	require.Contains(t, manifest, "arcflow.dev/idle-runners: auto")
	require.NoError(t, w.Apply(ctx, manifest))
	heldSet(t, w, "the listener holds the set's session")

	warm := func() int { return warmRunners(ctx, ns, "hra", "app") }
	peak := 0
	start := time.Now()
	for i := range 20 {
		w.Queue("octo-org/app", fmt.Sprintf("job-%d", i), []string{"arc-app"})
		peak = max(peak, warm())
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second)))
	}
	// The rate needs a few arrivals and the time to ready a few jobs that
	// waited for their runner: on a loaded machine the buffer may rise after
	// the last job, within the scale-down delay.
	require.Eventually(t, func() bool {
		peak = max(peak, warm())
		return peak > 0
	}, 15*time.Second, 200*time.Millisecond, "a buffer rose from the set's arrivals")
	rate, _ := stack.JSONPath(ctx, ns, "hra", "app", "{.status.warm.arrivalRate}")
	ready, _ := stack.JSONPath(ctx, ns, "hra", "app", "{.status.warm.timeToReady}")
	t.Logf("peak warm %d, arrival rate %s, time to ready %s", peak, rate, ready)
	allDone(t, w, 20, 90*time.Second, "every job ran")
	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 && warm() == 0 }, 90*time.Second, 200*time.Millisecond,
		"the buffer goes at rest, and the pool with it")
	require.Empty(t, w.Runners.Violations())
}
