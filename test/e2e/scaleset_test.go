package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// scaleSetManifest is a RunnerDeployment whose runners join the runner scale
// set arc-app, and its HRA: min, max and the scale-down delay, no trigger.
const scaleSetManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
  annotations:
    arcflow.dev/scale-set: arc-app
spec:
  template:
    spec:
      repository: octo-org/app
      labels: [linux]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: app
spec:
  scaleTargetRef:
    name: app
  minReplicas: 0
  maxReplicas: 4
  scaleDownDelaySecondsAfterScaleOut: 5
`

// With no webhook server at all, the jobs GitHub assigns to a runner scale set
// reach runner pods that register with the set's JIT configuration and run
// them; then the pool goes back to its minimum. The listener found no set and
// created it, with the pool's labels.
func TestAScaleSetsJobsRunWithNoWebhook(t *testing.T) {
	parallel(t)
	const ns = "scaleset"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 1,
		NoWebhook: true, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second},
	})
	require.Empty(t, w.Webhooks, "no webhook server runs")
	require.NoError(t, w.Apply(ctx, scaleSetManifest))

	set := heldSet(t, w, "the listener created the set and holds its session")
	require.Equal(t, "arc-app", set.Name)
	require.Equal(t, []string{"arc-app", "linux"}, set.Labels)
	require.Equal(t, "scaleset/"+ns+"/runnerdeployment/app", set.SessionOwner)

	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"arc-app"})
	}
	allDone(t, w, 3, 90*time.Second, "the three jobs ran on the set's runners")

	// arcflow status has the listener's row, and the worker whose poll runs
	// exports the set's gauges (maxReplicas 4) and counted the starts.
	out, err := arcflowCLI(t, ns, "status", "-n", ns)
	require.NoError(t, err, out)
	require.Regexp(t, `scaleset +scaleset/app +- +\d+ +set arc-app \(id \d+\), session held; \d+ assigned, \d+ running, \d+ idle`, out)
	setLabels := `enterprise="",name="arc-app",namespace="scaleset",organization="octo-org",repository="app"`
	var metrics string
	require.Eventually(t, func() bool {
		metrics = readAllMetrics(t, w.WorkerMetricsURL)
		return strings.Contains(metrics, "arcflow_gha_max_runners{"+setLabels+"} 4")
	}, 30*time.Second, 200*time.Millisecond, "the polling worker exports the set's gauges")
	require.Regexp(t, `arcflow_gha_started_jobs_total\{[^}]*name="arc-app"[^}]*\} [1-9]`, metrics)

	require.Eventually(t, func() bool { return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0 },
		60*time.Second, 200*time.Millisecond, "back to the minimum, nothing left registered")
	status, err := stack.Kubectl(ctx, "get", "rdeploy", "app", "-n", ns, "-o", "jsonpath={.status.scaleSetId}")
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(set.ID, 10), status, "the set's id is in the pool's status")

	pods := len(w.Runners.PodTimes())
	counts := w.GitHub.CallCounts()
	require.Equal(t, pods, counts["POST /actions-service/_apis/runtime/runnerscalesets/{id}/generatejitconfig"], "each runner registered with the set's JIT configuration")
	require.Zero(t, counts["POST /repos/{owner}/{repo}/actions/runners/generate-jitconfig"])
	require.LessOrEqual(t, pods, 4, "no runner beyond maxReplicas")
	require.Empty(t, w.Runners.Violations())
	stats, err := w.GitHub.ScaleSetStatisticsOf(set.ID)
	require.NoError(t, err)
	require.Zero(t, stats.TotalAssignedJobs)
	t.Logf("%d pods for 3 jobs; calls: %v", pods, counts)

	// `arcflow drain` closes the set's session; a job queued meanwhile waits
	// in GitHub and runs after --undo.
	lines, err := startCLI(t, ns, "drain", "--namespace", ns, "--timeout", "1m")()
	require.NoError(t, err, "%v", lines)
	require.Contains(t, joined(lines), "drain: scaleset/"+ns+"/runnerdeployment/app: session closed")
	require.Eventually(t, func() bool {
		sets := w.GitHub.ScaleSets()
		return len(sets) == 1 && sets[0].Session == ""
	}, 30*time.Second, 100*time.Millisecond, "the held listener closed its session")
	w.Queue("octo-org/app", "while-held", []string{"arc-app"})
	lines, err = startCLI(t, ns, "drain", "--undo", "-n", ns)()
	require.NoError(t, err, "%v", lines)
	require.Contains(t, joined(lines), "drain --undo: scaleset/"+ns+"/runnerdeployment/app: listening again")
	for _, j := range w.GitHub.Jobs() {
		if j.Name == "while-held" {
			require.Equal(t, "queued", j.Status, "no runner took the job while the listener was held")
		}
	}
	allDone(t, w, 4, 90*time.Second, "the job queued while held ran after --undo")
}

// heldSet waits until the world's one scale set is held by a listener's
// session, and returns it.
func heldSet(t *testing.T, w *world.World, what string) fakegithub.ScaleSetInfo {
	t.Helper()
	var set fakegithub.ScaleSetInfo
	require.Eventually(t, func() bool {
		sets := w.GitHub.ScaleSets()
		if len(sets) != 1 || sets[0].Session == "" {
			return false
		}
		set = sets[0]
		return true
	}, 60*time.Second, 100*time.Millisecond, what)
	return set
}
