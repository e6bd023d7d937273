package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// temporalOutage is how long Temporal stays down while the operator edits: a
// bundled Temporal's restart on a chart upgrade or a node drain.
const temporalOutage = 30 * time.Second

// runningPods counts the running runner pods in ns that carry label=value.
func runningPods(ctx context.Context, w *world.World, ns, label, value string) int {
	pods, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner + "," + label + "=" + value})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// Every edit made while Temporal is down reaches its workflow once Temporal is
// back, with nobody touching arcflow. Three pools at rest: a RunnerDeployment
// and a RunnerSet at 0, and a RunnerDeployment with one idle runner. Temporal
// stops for 30 s; meanwhile the first two pools' HRAs go to minReplicas 2 and
// their templates change, and the third pool is deleted. The resources say
// that their change waits for Temporal (never InvalidSpec). Temporal starts
// again on the same store: within 30 s each of the first two pools runs 2
// runner pods of the new template, and the third pool is gone with its runner.
func TestEditsMadeWhileTemporalIsDownReachTheirWorkflows(t *testing.T) {
	parallel(t)
	const ns = "temporal-down"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tmp := extraTemporal(t, ctx, "temporal-down")
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 5,
		Env: []string{"TEMPORAL_ADDRESS=" + tmp.Address},
	})
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(w.Worker.LogPath())
			t.Logf("worker log:\n%s", out)
		}
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "runnerset", "--all", "--wait=false")
	})
	gone := strings.NewReplacer("name: app", "name: gone", "minReplicas: 0", "minReplicas: 1").Replace(fullpath.RunnerDeployment)
	require.NoError(t, w.Apply(ctx, fullpath.RunnerDeployment+"---\n"+fullpath.RunnerSet+"---\n"+gone))
	for _, r := range []string{"hra/app", "hra/builders", "hra/gone", "rdeploy/app", "runnerset/builders", "rdeploy/gone"} {
		kind, name, _ := strings.Cut(r, "/")
		require.Eventually(t, func() bool { return acceptedField(ctx, ns, kind, name, "status") == "True" },
			30*time.Second, 100*time.Millisecond, "%s is accepted", r)
	}
	require.Eventually(t, func() bool { return runningPods(ctx, w, ns, activities.LabelRunnerDeployment, "gone") == 1 },
		30*time.Second, 100*time.Millisecond, "the pool to delete runs its idle runner")

	require.NoError(t, tmp.Stop())
	down := time.Now()
	edits := [][]string{
		{"patch", "hra", "app", "--type=merge", "-p", `{"spec":{"minReplicas":2}}`},
		{"patch", "hra", "builders", "--type=merge", "-p", `{"spec":{"minReplicas":2}}`},
		{"patch", "rdeploy", "app", "--type=merge", "-p", `{"spec":{"template":{"metadata":{"labels":{"edition":"rd-two"}}}}}`},
		{"patch", "runnerset", "builders", "--type=merge", "-p", `{"spec":{"template":{"metadata":{"labels":{"edition":"rs-two"}}}}}`},
		{"delete", "hra", "gone", "--wait=false"},
		{"delete", "rdeploy", "gone", "--wait=false"},
	}
	for _, edit := range edits {
		out, err := stack.Kubectl(ctx, append([]string{"-n", ns}, edit...)...)
		require.NoError(t, err, out)
	}
	for _, r := range []string{"hra/app", "hra/builders", "rdeploy/app", "runnerset/builders"} {
		kind, name, _ := strings.Cut(r, "/")
		require.Eventually(t, func() bool { return acceptedField(ctx, ns, kind, name, "reason") == "TemporalUnavailable" },
			temporalOutage-time.Since(down), 200*time.Millisecond, "%s says its change waits for Temporal", r)
		require.Equal(t, "Unknown", acceptedField(ctx, ns, kind, name, "status"), "%s: a Temporal outage is not a verdict on the resource", r)
	}
	// The outage lasts its whole length: what is tested is a change that waits
	// for Temporal, however long it is away.
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(temporalOutage - time.Since(down)):
	}
	require.NoError(t, tmp.Start(ctx))
	back := time.Now()

	landed := map[string]time.Duration{}
	require.Eventually(t, func() bool {
		checks := map[string]func() bool{
			"RunnerDeployment": func() bool { return runningPods(ctx, w, ns, "edition", "rd-two") == 2 },
			"RunnerSet":        func() bool { return runningPods(ctx, w, ns, "edition", "rs-two") == 2 },
			"deletion": func() bool {
				_, err := stack.JSONPath(ctx, ns, "rdeploy", "gone", "{.metadata.name}")
				return err != nil && runningPods(ctx, w, ns, activities.LabelRunnerDeployment, "gone") == 0
			},
		}
		for what, done := range checks {
			if _, ok := landed[what]; !ok && done() {
				landed[what] = time.Since(back)
			}
		}
		return len(landed) == len(checks)
	}, 30*time.Second, 100*time.Millisecond, "every edit made during the outage took effect within 30 s of Temporal's return")
	for _, r := range []string{"hra/app", "hra/builders", "rdeploy/app", "runnerset/builders"} {
		kind, name, _ := strings.Cut(r, "/")
		require.Eventually(t, func() bool { return acceptedField(ctx, ns, kind, name, "status") == "True" },
			10*time.Second, 100*time.Millisecond, "%s is accepted again", r)
	}
	t.Logf("Temporal down %v while 2 HRAs, 2 templates and a deletion changed; after it came back: %v", temporalOutage, landed)
}

// A Temporal of the operator's own that `arcflow setup` never ran against: no
// namespace "arcflow", no search attribute. The worker does not crash-loop:
// it waits for the namespace, and every resource names what is missing.
// `arcflow setup` run as the docs say mends it with nobody touching arcflow:
// the resources are accepted and a job queued meanwhile runs.
func TestATemporalNotSetUpIsNamedAndSetupMendsIt(t *testing.T) {
	parallel(t)
	const ns, namespace = "temporal-bare", "arcflow"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bare, err := stack.StartExtraTemporal(ctx, "temporal-bare", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = bare.Stop() })
	env := []string{"TEMPORAL_ADDRESS=" + bare.Address, "TEMPORAL_NAMESPACE=" + namespace}
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 6, Env: env,
	})
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(w.Worker.LogPath())
			t.Logf("worker log:\n%s", out)
		}
	})
	require.NoError(t, w.Apply(ctx, fullpath.RunnerDeployment))
	for _, kind := range []string{"hra", "rdeploy"} {
		require.Eventually(t, func() bool { return acceptedField(ctx, ns, kind, "app", "reason") == "TemporalNotSetUp" },
			60*time.Second, 200*time.Millisecond, "the %s names what Temporal lacks", kind)
		require.Equal(t, "False", acceptedField(ctx, ns, kind, "app", "status"))
		require.Contains(t, acceptedField(ctx, ns, kind, "app", "message"), `namespace "arcflow"`)
	}
	w.Queue("octo-org/app", "waiting", buildLabels)
	require.NoError(t, w.Sender.Flush(ctx))

	setup := exec.CommandContext(ctx, arcflowBinary(t), "setup")
	setup.Env = append(os.Environ(), env...)
	out, err := setup.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "namespace added")
	fixed := time.Now()
	for _, kind := range []string{"hra", "rdeploy"} {
		require.Eventually(t, func() bool { return acceptedField(ctx, ns, kind, "app", "status") == "True" },
			60*time.Second, 200*time.Millisecond, "the %s is accepted once Temporal is set up", kind)
	}
	accepted := time.Since(fixed)
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("completed") == 1 }, 90*time.Second, 200*time.Millisecond,
		"the job queued while Temporal was not set up runs (the autoscaler's first decision reads GitHub's queued jobs)")
	t.Logf("arcflow setup printed:\n%s\nresources accepted %v after it, the waiting job done %v after it",
		out, accepted.Round(100*time.Millisecond), time.Since(fixed).Round(100*time.Millisecond))
}
