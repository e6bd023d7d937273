package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/kubelet"
)

// poolWorld is arcflow as a user runs it: `arcflow worker` as a process, a fake
// GitHub and simulated runners, and manifests applied with kubectl.
type poolWorld struct {
	t      *testing.T
	ctx    context.Context
	ns     string
	kube   kubernetes.Interface
	github *fakegithub.Server
	worker *workerProcess
	dir    string
}

func startPoolWorld(t *testing.T, ns string) *poolWorld {
	ctx := testContext(t)
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(repoRoot(t), "deploy", "crds")))
	createNamespace(t, ctx, ns)
	useTemporalNamespace(t, ctx, ns)
	kube, err := stack.Kube()
	require.NoError(t, err)
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })

	rctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	registrar := &sim.Runners{Kube: kube, GitHub: gh, Namespace: ns, ManualJobs: true, RegisterDelay: time.Millisecond, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	go func() { _ = registrar.Run(rctx) }()

	w := &poolWorld{t: t, ctx: ctx, ns: ns, kube: kube, github: gh, dir: t.TempDir()}
	w.worker = startWorkerProcess(t, ns, append(temporalEnv(ns),
		"KUBECONFIG="+stack.Kubeconfig, "GITHUB_TOKEN=ghp_e2e", "GITHUB_URL="+gh.URL,
		"POD_NAMESPACE="+ns, "ARCFLOW_LEASE_DURATION=3s",
	))
	// Before the worker stops: delete the pools and let them drain, so no
	// runner pod is left behind. This also proves delete.
	t.Cleanup(func() {
		out, err := stack.Kubectl(context.Background(), "delete", "-n", ns, "rdeploy,runnerset", "--all", "--wait=false")
		require.NoError(t, err, out)
		drained := assert.Eventually(t, func() bool {
			return len(w.podsIn()) == 0 && len(gh.Runners()) == 0
		}, 90*time.Second, 200*time.Millisecond, "pools drained after delete")
		if !drained {
			// What was left, for a failure seen once under load (CI).
			for _, p := range w.podsIn() {
				t.Logf("left: pod %s phase %s deleting %v finalizers %v", p.Name, p.Status.Phase, p.DeletionTimestamp != nil, p.Finalizers)
			}
			t.Logf("left: github runners %+v", gh.Runners())
			open, _ := temporalCLI(context.Background(), ns, "workflow", "list", "--query", "ExecutionStatus='Running'")
			t.Logf("left: running workflows:\n%s", open)
		}
	})
	return w
}

// podsIn lists every runner pod of the world's namespace.
func (w *poolWorld) podsIn() []corev1.Pod {
	list, err := w.kube.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: activities.LabelRunner})
	require.NoError(w.t, err)
	return list.Items
}

// apply writes a manifest and applies it with kubectl, as a user would.
func (w *poolWorld) apply(manifest string) {
	path := filepath.Join(w.dir, fmt.Sprintf("m%d.yaml", time.Now().UnixNano()))
	require.NoError(w.t, os.WriteFile(path, []byte(manifest), 0o644))
	out, err := stack.Kubectl(w.ctx, "apply", "-n", w.ns, "-f", path)
	require.NoError(w.t, err, out)
}

func (w *poolWorld) pods(pool string) []corev1.Pod {
	list, err := w.kube.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=" + pool})
	require.NoError(w.t, err)
	return list.Items
}

// eventually waits for a condition of the whole system, checking every 200 ms.
func (w *poolWorld) eventually(what string, cond func() bool) {
	w.t.Helper()
	require.Eventually(w.t, cond, 90*time.Second, 200*time.Millisecond, what)
}

// converged: n Running pods of the pool, all of one template hash (if given), each
// with a registered runner, and no other runner registered in GitHub.
func (w *poolWorld) converged(pool string, n int, hash string) bool {
	pods := w.pods(pool)
	if len(pods) != n {
		return false
	}
	names := map[string]bool{}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || (hash != "" && p.Labels[activities.LabelTemplateHash] != hash) {
			return false
		}
		if _, ok := w.github.Runner(p.Name); !ok {
			return false
		}
		names[p.Name] = true
	}
	for _, r := range w.github.Runners() {
		if !names[r.Name] {
			return false
		}
	}
	return true
}

func (w *poolWorld) kubectlGet(what string) string {
	out, err := stack.Kubectl(w.ctx, "get", "-n", w.ns, what)
	require.NoError(w.t, err)
	return out
}

// deletionWatch records, per pod, when it started going away.
type deletionWatch struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (w *poolWorld) watchDeletions(pool string) *deletionWatch {
	d := &deletionWatch{at: map[string]time.Time{}}
	wi, err := w.kube.CoreV1().Pods(w.ns).Watch(w.ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=" + pool})
	require.NoError(w.t, err)
	w.t.Cleanup(wi.Stop)
	go func() {
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if ok && (ev.Type == watch.Deleted || p.DeletionTimestamp != nil) {
				d.mu.Lock()
				if _, seen := d.at[p.Name]; !seen {
					d.at[p.Name] = time.Now()
				}
				d.mu.Unlock()
			}
		}
	}()
	return d
}

func (d *deletionWatch) get(name string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.at[name]
	return t, ok
}

func rdManifest(name string, replicas int, label string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %s
spec:
  replicas: %d
  template:
    metadata:
      labels:
        rollout: %q
    spec:
      repository: octo/app
      labels: [linux, e2e]
`, name, replicas, label)
}

func TestRunnerDeploymentScalesUpAndUnregistersBeforeScalingDown(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "rd-scale")
	w.apply(rdManifest("app", 3, "a"))
	w.eventually("3 Running pods, 3 registered runners", func() bool { return w.converged("app", 3, "") })
	w.eventually("status shows 3 ready", func() bool {
		return strings.Contains(w.kubectlGet("rdeploy"), "3         3            3")
	})
	t.Log("\n" + w.kubectlGet("rdeploy"))

	deletions := w.watchDeletions("app")
	w.github.ResetCalls()
	w.apply(rdManifest("app", 1, "a"))
	w.eventually("1 runner left", func() bool { return w.converged("app", 1, "") })

	removed := map[string]time.Time{}
	for _, c := range w.github.Calls() {
		if c.Method == "DELETE" {
			require.Equal(t, 204, c.Status)
			removed[c.Path] = c.At
		}
	}
	require.Len(t, removed, 2, "two runners unregistered")
	deletions.mu.Lock()
	require.Len(t, deletions.at, 2)
	for pod, goneAt := range deletions.at {
		var before bool
		for _, at := range removed {
			before = before || at.Before(goneAt)
		}
		require.True(t, before, "pod %s went only after an unregistration", pod)
	}
	deletions.mu.Unlock()
	t.Log("\n" + w.kubectlGet("rdeploy"))
}

func TestRollingUpdateLetsABusyRunnerFinishItsJob(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "rd-rollout")
	w.apply(rdManifest("app", 2, "v1"))
	w.eventually("2 runners", func() bool { return w.converged("app", 2, "") })
	oldHash := w.pods("app")[0].Labels[activities.LabelTemplateHash]

	busy := w.pods("app")[0].Name
	job := w.github.QueueJob("octo/app", "long", []string{"linux"})
	_, err := w.github.StartJob(job.ID, busy)
	require.NoError(t, err)
	deletions := w.watchDeletions("app")

	w.apply(rdManifest("app", 2, "v2"))
	w.eventually("the idle old runner is replaced", func() bool {
		pods := w.pods("app")
		var newOnes int
		for _, p := range pods {
			if p.Labels[activities.LabelTemplateHash] != oldHash && p.Status.Phase == corev1.PodRunning {
				if _, ok := w.github.Runner(p.Name); ok {
					newOnes++
				}
			}
		}
		return newOnes >= 1 && len(pods) <= 3
	})
	_, gone := deletions.get(busy)
	require.False(t, gone, "the busy runner's pod survives while its job runs")
	_, stillRegistered := w.github.Runner(busy)
	require.True(t, stillRegistered)

	// The job ends; the ephemeral runner exits by itself.
	_, err = w.github.CompleteJob(job.ID, "success")
	require.NoError(t, err)
	require.NoError(t, kubelet.EndPod(w.ctx, w.kube, w.ns, busy, corev1.PodSucceeded))
	w.eventually("all runners are new", func() bool {
		pods := w.pods("app")
		return w.converged("app", 2, "") && pods[0].Labels[activities.LabelTemplateHash] != oldHash && pods[1].Labels[activities.LabelTemplateHash] != oldHash
	})
	t.Log("\n" + w.kubectlGet("rdeploy"))
}

func TestRunnerSetRunnersAreOneReplicaStatefulSetsWithClaims(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "runnerset")
	// No provisioner runs here: offer PersistentVolumes for the claims to bind to.
	for i := range 2 {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("runnerset-pv-%d", i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: fmt.Sprintf("/tmp/pv-%d", i)}},
			},
		}
		_, err := w.kube.CoreV1().PersistentVolumes().Create(w.ctx, pv, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	manifest, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "examples", "runnerset.yaml"))
	require.NoError(t, err)
	w.apply(strings.Replace(strings.Replace(string(manifest), "replicas: 1", "replicas: 2", 1), "organization: example-org", "repository: octo/app", 1))

	w.eventually("2 runners", func() bool { return w.converged("example-runnerset", 2, "") })
	sets, err := w.kube.AppsV1().StatefulSets(w.ns).List(w.ctx, metav1.ListOptions{LabelSelector: activities.LabelRunnerSet + "=example-runnerset"})
	require.NoError(t, err)
	require.Len(t, sets.Items, 2)
	for _, s := range sets.Items {
		require.Equal(t, int32(1), *s.Spec.Replicas)
	}
	w.eventually("claims bound", func() bool {
		claims, err := w.kube.CoreV1().PersistentVolumeClaims(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil || len(claims.Items) != 2 {
			return false
		}
		for _, c := range claims.Items {
			if c.Status.Phase != corev1.ClaimBound || !strings.HasPrefix(c.Name, "tool-cache-example-runnerset-") {
				return false
			}
		}
		return true
	})
	t.Log("\n" + w.kubectlGet("runnerset,statefulsets,pods,pvc"))
}

func TestWorkerKilledMidRolloutConverges(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "rd-kill")
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range w.pods("app") {
			t.Logf("pod %s hash %s phase %s deleting %v", p.Name, p.Labels[activities.LabelTemplateHash], p.Status.Phase, p.DeletionTimestamp != nil)
		}
		t.Logf("github runners: %+v", w.github.Runners())
		state, _ := temporalCLI(context.Background(), "rd-kill", "workflow", "query", "--workflow-id", "pool/rd-kill/runnerdeployment/app", "--type", "state")
		t.Logf("pool state: %s", state)
		open, _ := temporalCLI(context.Background(), "rd-kill", "workflow", "list", "--query", "ExecutionStatus='Running' AND WorkflowType='RunnerWorkflow'")
		t.Logf("running runner workflows:\n%s", open)
	})
	w.apply(rdManifest("app", 3, "v1"))
	w.eventually("3 runners", func() bool { return w.converged("app", 3, "") })
	oldHash := w.pods("app")[0].Labels[activities.LabelTemplateHash]

	w.apply(rdManifest("app", 3, "v2"))
	w.eventually("the rollout has started", func() bool {
		for _, p := range w.pods("app") {
			if p.Labels[activities.LabelTemplateHash] != oldHash {
				return true
			}
		}
		return false
	})
	w.worker.kill() // SIGKILL, mid-rollout
	w.worker.restart()

	w.eventually("converged on the new template, nothing orphaned", func() bool {
		if !w.converged("app", 3, "") {
			return false
		}
		for _, p := range w.pods("app") {
			if p.Labels[activities.LabelTemplateHash] == oldHash {
				return false
			}
		}
		return true
	})
	secrets, err := w.kube.CoreV1().Secrets(w.ns).List(w.ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=app"})
	require.NoError(t, err)
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	require.Len(t, names, 1, "the pool's one token Secret, and no runner's Secret orphaned: %v", names)
	require.Equal(t, "true", secrets.Items[0].Labels[activities.LabelPoolToken], "%v", names)
}

func TestInvalidAndUnsupportedSpecsAreReportedInConditions(t *testing.T) {
	parallel(t)
	w := startPoolWorld(t, "rd-conditions")
	w.apply(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: contradictory
spec:
  template:
    spec:
      repository: octo/app
      dockerEnabled: false
      dockerdWithinRunnerContainer: true
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: k8s-mode
spec:
  replicas: 0
  template:
    spec:
      repository: octo/app
      containerMode: kubernetes
      workVolumeClaimTemplate:
        storageClassName: standard
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi
`)
	condition := func(name, typ string) string {
		out, err := stack.JSONPath(w.ctx, w.ns, "rdeploy", name, `{.status.conditions[?(@.type=="`+typ+`")].status} {.status.conditions[?(@.type=="`+typ+`")].message}`)
		require.NoError(t, err)
		return out
	}
	w.eventually("the contradictory spec is rejected", func() bool {
		return strings.HasPrefix(condition("contradictory", "Accepted"), "False spec.template.spec.dockerdWithinRunnerContainer")
	})
	w.eventually("kubernetes container mode is accepted, not named unsupported", func() bool {
		return strings.HasPrefix(condition("k8s-mode", "Accepted"), "True") && condition("k8s-mode", "UnsupportedFields") == " "
	})
	require.Empty(t, w.pods("contradictory"), "an invalid resource gets no runners")
	events, err := stack.Kubectl(w.ctx, "get", "events", "-n", w.ns, "--field-selector", "involvedObject.name=contradictory")
	require.NoError(t, err)
	require.Contains(t, events, "InvalidSpec")
}
