package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// poolDeleteJobs is how many jobs run when the pool goes.
const poolDeleteJobs = 4

// busyPool starts a world with the app RunnerDeployment (maxReplicas 5, one
// idle runner kept), and four jobs of the given length running on it beside
// the idle one.
// arcflow's processes run in their own namespace, as installed (their
// leader-election Lease is there), not in the runners'.
func busyPool(t *testing.T, ctx context.Context, ns string, jobs time.Duration) *world.World {
	system := ns + "-arcflow-system"
	createNamespace(t, ctx, system)
	t.Cleanup(func() { _, _ = stack.Kubectl(context.Background(), "delete", "namespace", system, "--wait=false") })
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: jobs, Seed: 5,
		Env: []string{"POD_NAMESPACE=" + system},
	})
	manifest := strings.Replace(world.WithIdleRunners(fullpath.RunnerDeployment, "app", 1), "maxReplicas: 4", "maxReplicas: 5", 1)
	require.NoError(t, w.Apply(ctx, manifest))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond, "one idle runner")
	for i := range poolDeleteJobs {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "build"})
	}
	require.Eventually(t, func() bool {
		started := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "in_progress" {
				started++
			}
		}
		return started == poolDeleteJobs && w.IdleRunners() == 1
	}, 60*time.Second, 100*time.Millisecond, "the jobs run, one runner idle beside them")
	return w
}

// poolDeleted checks the end of a deletion: every job ran to success on the
// runner it started on, no runner is registered, no runner pod is left.
func poolDeleted(t *testing.T, ctx context.Context, w *world.World, ns string, deleted time.Time) {
	require.Eventually(t, func() bool {
		for _, j := range w.GitHub.Jobs() {
			if j.Status != "completed" {
				return false
			}
		}
		return true
	}, 2*time.Minute, 200*time.Millisecond, "every job ran to its end")
	var lastJob time.Time
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "%s was not cancelled", j.Name)
		if j.CompletedAt.After(lastJob) {
			lastJob = j.CompletedAt
		}
	}
	require.Empty(t, w.Runners.Violations(), "no busy runner's pod was deleted")
	require.Zero(t, w.Runners.Interrupted(), "no job interrupted")
	require.Eventually(t, func() bool {
		pods, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool})
		return err == nil && len(pods.Items) == 0 && len(w.GitHub.Runners()) == 0
	}, 60*time.Second, 200*time.Millisecond, "no runner pod and no registered runner left")
	t.Logf("%d jobs, the last done %v after the deletion; jobs interrupted %d, busy pods deleted %d, runners left registered %d",
		len(w.GitHub.Jobs()), lastJob.Sub(deleted).Round(100*time.Millisecond), w.Runners.Interrupted(), len(w.Runners.Violations()), len(w.GitHub.Runners()))
}

// kubectl delete of a RunnerDeployment whose runners run jobs: the idle
// runner is removed (from GitHub, then its pod) at once, the busy ones
// finish their jobs, and only then does the RunnerDeployment go, with
// nothing of it left: no pod, no registered runner, no Secret, no finalizer.
func TestDeletingARunnerDeploymentLetsItsJobsFinish(t *testing.T) {
	parallel(t)
	const ns = "pool-delete"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := busyPool(t, ctx, ns, 60*time.Second)

	deleted := time.Now()
	out, err := stack.Kubectl(ctx, "delete", "-n", ns, "rdeploy", "app", "--wait=false")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool { return w.IdleRunners() == 0 && w.Runners.LivePods() == poolDeleteJobs },
		20*time.Second, 100*time.Millisecond, "the idle runner goes at once, the busy ones stay")
	idleGone := time.Since(deleted)
	out, err = stack.JSONPath(ctx, ns, "rdeploy", "app", "{.metadata.deletionTimestamp} {.metadata.finalizers}")
	require.NoError(t, err, out)
	require.Contains(t, out, activities.PoolFinalizer, "the RunnerDeployment waits for its pool")
	// The pool hears of the idle runner's end from its workflow, a moment
	// after GitHub and the API server show it gone.
	waitingForBusy := regexp.MustCompile(`deleting, waiting for its runners; Busy 4, busy ones until \S+`)
	var status string
	require.Eventually(t, func() bool {
		lines, err := startCLI(t, ns, "status", "-n", ns)()
		status = joined(lines)
		return err == nil && waitingForBusy.MatchString(status)
	}, 20*time.Second, 500*time.Millisecond, "arcflow status says what the pool waits for")
	t.Logf("arcflow status while the pool drains:\n%s", status)

	poolDeleted(t, ctx, w, ns, deleted)
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace(ns).Get(ctx, "app", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 60*time.Second, 200*time.Millisecond, "the RunnerDeployment is gone once drained")
	gone := time.Since(deleted)
	require.Eventually(t, func() bool {
		secrets, err := w.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPoolToken})
		return err == nil && len(secrets.Items) == 0
	}, 30*time.Second, 200*time.Millisecond, "the pool's token Secret went with it")
	require.Empty(t, finalizers(t, ctx, ns), "no finalizer is left in the namespace")
	t.Logf("idle runner gone %v after the delete; RunnerDeployment gone %v after", idleGone.Round(100*time.Millisecond), gone.Round(100*time.Millisecond))
}

// kubectl delete namespace, with the chart's runner pod policy installed:
// the namespace controller may not delete the Running runner pods, the pool
// drains as above, and the namespace goes once the jobs are done.
func TestDeletingANamespaceLetsItsJobsFinish(t *testing.T) {
	parallel(t)
	const ns = "namespace-delete"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	applyRunnerPodPolicy(t, ctx, ns)
	w := busyPool(t, ctx, ns, 30*time.Second) // the RunnerDeployment test above runs jobs of 60 s

	deleted := time.Now()
	out, err := stack.Kubectl(ctx, "delete", "namespace", ns, "--wait=false")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool { return w.IdleRunners() == 0 }, 20*time.Second, 100*time.Millisecond, "the idle runner goes at once")
	poolDeleted(t, ctx, w, ns, deleted)
	require.Eventually(t, func() bool {
		_, err := w.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 2*time.Minute, 500*time.Millisecond, "the namespace is gone once drained")
	t.Logf("namespace gone %v after its deletion", time.Since(deleted).Round(100*time.Millisecond))
}

// applyRunnerPodPolicy installs the chart's runner pod policy as helm renders
// it, bound to one namespace so that other tests' namespaces are not held.
func applyRunnerPodPolicy(t *testing.T, ctx context.Context, ns string) {
	rendered := runHelm(t, ctx, "template", "arcflow", chartDir(t),
		"--show-only", "templates/runnerpodprotection.yaml",
		"--set", "runnerPodProtection.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+ns)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(rendered), 0o600))
	out, err := stack.Kubectl(ctx, "apply", "-f", path)
	require.NoError(t, err, out)
	t.Cleanup(func() { _, _ = stack.Kubectl(context.Background(), "delete", "-f", path, "--ignore-not-found") })
}
