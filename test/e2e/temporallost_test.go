package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// The fleet of the tests below: maxReplicas is exactly what the busy and the
// waiting jobs need, so one runner too many shows in the peak.
const (
	lostBusy    = 10
	lostWaiting = 5
	lostMax     = lostBusy + lostWaiting
)

var buildLabels = []string{"self-hosted", "linux", "build"}

// extraTemporal starts a Temporal dev server of the test's own, with
// arcflow's search attributes, as `arcflow setup` would leave one.
func extraTemporal(t *testing.T, ctx context.Context, name string) *localstack.ExtraTemporal {
	tmp, err := stack.StartExtraTemporal(ctx, name, contract.SearchAttributeTypes())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tmp.Stop() })
	return tmp
}

// busyOn starts a world whose arcflow uses the Temporal at address, and
// lostBusy jobs of the given length running on its runners.
func busyOn(t *testing.T, ctx context.Context, ns string, jobs time.Duration, env ...string) *world.World {
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: jobs, Seed: 11, Env: env,
	})
	require.NoError(t, w.Apply(ctx, strings.Replace(fullpath.RunnerDeployment, "maxReplicas: 4", fmt.Sprintf("maxReplicas: %d", lostMax), 1)))
	for i := range lostBusy {
		w.Queue("octo-org/app", fmt.Sprintf("busy-%d", i), buildLabels)
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress") == lostBusy }, 60*time.Second, 100*time.Millisecond, "the jobs run")
	return w
}

// rebuilt checks the end of a rebuild: every job ran to success on the
// runner it started on, and nothing is left: no runner pod, no runner
// Secret, no registered runner.
func rebuilt(t *testing.T, ctx context.Context, w *world.World, ns string, jobs int) {
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("completed") == jobs }, 3*time.Minute, 200*time.Millisecond, "every job ran to its end")
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "%s was not cancelled", j.Name)
	}
	require.Empty(t, w.Runners.Violations(), "no busy runner's pod was deleted")
	require.Zero(t, w.Runners.Interrupted(), "no job interrupted")
	require.Eventually(t, func() bool { return nothingLeft(ctx, w.Kube, w.GitHub, ns) },
		90*time.Second, 200*time.Millisecond, "no runner pod, runner Secret or registered runner left")
}

// nothingLeft: no runner pod and no runner Secret in ns, and no runner
// registered on GitHub.
func nothingLeft(ctx context.Context, kube kubernetes.Interface, gh *fakegithub.Server, ns string) bool {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
	if err != nil || len(pods.Items) > 0 {
		return false
	}
	secrets, err := kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
	return err == nil && len(secrets.Items) == 0 && len(gh.Runners()) == 0
}

// 10 runners busy on 60 s jobs; Temporal stops, and 5 jobs queue while it is
// down (their deliveries refused, as GitHub does not send them again); its
// store is deleted and it starts empty, as a bundled Temporal whose volume
// was lost. Nobody touches arcflow: its worker notices the workflows are gone
// (--workflow-check-period, 5 s here) and rebuilds from the cluster and
// GitHub: the 10 runners become runner workflows again and finish their
// jobs, the 5 waiting jobs get runners at the first decision, the fleet never
// passes maxReplicas, and nothing is left behind.
func TestArcflowRebuildsWhenTemporalsStoreIsLost(t *testing.T) {
	parallel(t)
	const ns = "temporal-lost"
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
	defer cancel()
	tmp := extraTemporal(t, ctx, "temporal-lost")
	w := busyOn(t, ctx, ns, 60*time.Second, "TEMPORAL_ADDRESS="+tmp.Address, "ARCFLOW_WORKFLOW_CHECK_PERIOD=5s")
	peak := world.TrackPeak(ctx, 50*time.Millisecond, w.Runners.LivePods)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(w.Worker.LogPath())
			t.Logf("worker log:\n%s", out)
		}
	})

	before := w.Sender.Stats()
	require.NoError(t, tmp.Stop())
	for i := range lostWaiting {
		w.Queue("octo-org/app", fmt.Sprintf("waiting-%d", i), buildLabels)
	}
	require.NoError(t, w.Sender.Flush(ctx))
	after := w.Sender.Stats()
	refused := after.Rejected + after.Failed - before.Rejected - before.Failed
	require.GreaterOrEqual(t, refused, lostWaiting, "the webhook refused the waiting jobs' deliveries: it has no Temporal to make them durable in")
	require.NoError(t, tmp.LoseStore(ctx))
	back := time.Now()

	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress") == lostMax }, 60*time.Second, 100*time.Millisecond,
		"the jobs that queued while Temporal was down start beside the busy ones")
	var slowest time.Duration
	for _, j := range w.GitHub.Jobs() {
		if strings.HasPrefix(j.Name, "waiting-") {
			slowest = max(slowest, j.StartedAt.Sub(back))
		}
	}
	cli := exec.CommandContext(ctx, arcflowBinary(t), "status", "-n", ns)
	cli.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+tmp.Address)
	status, err := cli.CombinedOutput()
	require.NoError(t, err, "%s", status)
	require.Contains(t, string(status), fmt.Sprintf("%d taken over", lostBusy), "arcflow status shows the runners taken over")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=RunnersTakenOver", "-o", "jsonpath={.items[*].message}")
	require.NoError(t, err, events)
	require.Contains(t, events, fmt.Sprintf("took over %d runner(s)", lostBusy), "the takeover is reported on the RunnerDeployment")
	restarted, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=WorkflowRestarted", "-o", "jsonpath={.items[*].involvedObject.kind}")
	require.NoError(t, err, restarted)
	require.ElementsMatch(t, []string{"RunnerDeployment", "HorizontalRunnerAutoscaler"}, strings.Fields(restarted), "each resource says its workflow was started again")
	t.Logf("arcflow status after the rebuild:\n%s", status)
	takenOver := func() string { return conditionField(ctx, ns, "rdeploy", "app", "RunnersTakenOver", "status") }
	require.Eventually(t, func() bool { return takenOver() == "True" }, 10*time.Second, 100*time.Millisecond, "a condition says the pool runs runners it took over")

	rebuilt(t, ctx, w, ns, lostMax)
	require.Eventually(t, func() bool { return takenOver() == "False" }, 10*time.Second, 100*time.Millisecond, "and that they all ended")
	top := peak()
	require.LessOrEqual(t, top, lostMax, "the fleet never passed maxReplicas")
	t.Logf("Temporal's store lost with %d jobs running: %d deliveries refused meanwhile; the %d waiting jobs all started %v after Temporal came back empty; peak %d live pods (maxReplicas %d)",
		lostBusy, refused, lostWaiting, slowest.Round(100*time.Millisecond), top, lostMax)
}

// arcflow moved from one Temporal to another with runners busy, as an
// operator moves from the bundled Temporal to a cluster: the chart's values
// changed and the Deployments rolled. The new Temporal starts empty and
// arcflow rebuilds on it; the old one is deleted after.
func TestArcflowMovesToAnotherTemporalWithRunnersBusy(t *testing.T) {
	parallel(t)
	const ns = "temporal-move"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	old := extraTemporal(t, ctx, "temporal-old")
	next := extraTemporal(t, ctx, "temporal-new")
	w := busyOn(t, ctx, ns, 30*time.Second, "TEMPORAL_ADDRESS="+old.Address)
	peak := world.TrackPeak(ctx, 50*time.Millisecond, w.Runners.LivePods)

	require.NoError(t, w.RestartArcflow(ctx, "TEMPORAL_ADDRESS="+next.Address))
	for i := range lostWaiting {
		w.Queue("octo-org/app", fmt.Sprintf("after-%d", i), buildLabels)
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress")+w.GitHub.JobsIn("completed") == lostMax },
		60*time.Second, 100*time.Millisecond, "jobs queued after the move get runners")
	require.NoError(t, old.Stop(), "the old Temporal is deleted")
	rebuilt(t, ctx, w, ns, lostMax)
	require.LessOrEqual(t, peak(), lostMax, "the fleet never passed maxReplicas")
}
