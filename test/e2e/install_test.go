package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A real `helm install` of the chart, with Temporal pointed at the stack, GitHub
// at the fake (as a GitHub Enterprise Server) and both Secrets made by the chart:
// the worker and webhook Deployments it creates run, with exactly their rendered
// args and env, as their ServiceAccounts, and turn a signed delivery into a runner.
func TestHelmInstallRunsWhatItRenders(t *testing.T) {
	parallel(t)
	const release, system, runners = "arcflow-chart", "arcflow-chart", "chart-runners"
	img := arcflowImage(t) // before the test's deadline starts: a cold build takes minutes
	ctx := installContext(t)
	gh := startFakeGitHub(t)
	// With scope.singleNamespace the chart's Roles live in the runners'
	// namespace, which must exist first, as the install guide says; ARC never
	// ran on this cluster, so its guard is off (arcController.lease=""), also
	// as the guide says.
	createNamespace(t, ctx, runners)
	out := runHelm(t, ctx, "install", release, chartDir(t),
		"--namespace", system, "--create-namespace",
		"--set", "temporal.address="+stack.TemporalAddress, "--set", "temporal.namespace="+runners,
		"--set", "githubEnterpriseServerURL="+gh.URL,
		"--set", "authSecret.create=true", "--set", "authSecret.github_token=ghp_chart",
		"--set", "githubWebhookServer.secret.create=true",
		"--set", "githubWebhookServer.secret.github_webhook_secret_token="+webhookSecret,
		"--set", "scope.singleNamespace=true", "--set", "scope.watchNamespace="+runners, "--set", "arcController.lease=",
		// The runner pod policy for the runners' namespace alone: tests beside
		// this one run their own runner pods.
		"--set", "runnerPodProtection.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+runners)
	require.Contains(t, out, "STATUS: deployed")
	t.Cleanup(func() { runHelm(t, ctx, "uninstall", release, "--namespace", system) })

	runInstalled(t, ctx, img, gh, system, release+"-worker", release+"-webhook", runners)
}

// The kustomize base through an overlay, as the README tells users: the overlay
// sets the Temporal address, the GitHub (Enterprise Server) URL and one watched
// namespace; the Secrets are made with kubectl as the README says. The Deployments
// run with exactly what the API server holds.
//
// Not parallel: the base applies cluster-wide objects (its ClusterRole, the
// runner pod policy for every namespace).
func TestKustomizeBaseRunsWhatItDeploys(t *testing.T) {
	const system, runners = "arcflow-system", "kustomize-runners"
	img := arcflowImage(t)
	ctx := installContext(t)
	gh := startFakeGitHub(t)
	_, _ = stack.Kubectl(ctx, "create", "namespace", system)
	for _, secret := range [][]string{
		{"controller-manager", "--from-literal=github_token=ghp_kustomize"},
		{"github-webhook-server", "--from-literal=github_webhook_secret_token=" + webhookSecret},
	} {
		_, _ = stack.Kubectl(ctx, "delete", "secret", secret[0], "-n", system, "--ignore-not-found")
		out, err := stack.Kubectl(ctx, "create", "secret", "generic", secret[0], "-n", system, secret[1])
		require.NoError(t, err, out)
	}
	overlay := writeOverlay(t, system, runners, gh.URL)
	out, err := stack.Kubectl(ctx, "apply", "--server-side", "-k", overlay)
	require.NoError(t, err, out)
	require.Contains(t, out, "deployment.apps/arcflow-worker serverside-applied")
	t.Cleanup(func() {
		out, err := stack.Kubectl(context.Background(), "delete", "-n", system, "deployment/arcflow-worker", "deployment/arcflow-webhook", "service/arcflow-webhook")
		require.NoError(t, err, out)
	})

	runInstalled(t, ctx, img, gh, system, "arcflow-worker", "arcflow-webhook", runners)
}

// writeOverlay writes a kustomization over deploy/kustomize/base that a user
// would write: Temporal's address, a GitHub Enterprise Server URL and a watched
// namespace for both processes.
func writeOverlay(t *testing.T, system, runners, githubURL string) string {
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(repoRoot(t), "deploy", "kustomize", "base"))
	require.NoError(t, err)
	env := func(deployment, container string, vars ...string) string {
		var b strings.Builder
		for i := 0; i < len(vars); i += 2 {
			fmt.Fprintf(&b, "\n                - {name: %s, value: %q}", vars[i], vars[i+1])
		}
		return fmt.Sprintf(`
  - patch: |-
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: %s}
      spec:
        template:
          spec:
            containers:
              - name: %s
                env:%s
  - target: {kind: Deployment, name: %s}
    patch: |-
      - {op: add, path: /spec/template/spec/containers/0/args/-, value: --watch-namespace=%s}`,
			deployment, container, b.String(), deployment, runners)
	}
	kustomization := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - %s
patches:%s%s
`, system, base,
		env("arcflow-worker", "worker", "TEMPORAL_ADDRESS", stack.TemporalAddress, "TEMPORAL_NAMESPACE", runners, "GITHUB_ENTERPRISE_URL", githubURL),
		env("arcflow-webhook", "webhook", "TEMPORAL_ADDRESS", stack.TemporalAddress, "TEMPORAL_NAMESPACE", runners))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644))
	t.Logf("overlay kustomization.yaml:\n%s", kustomization)
	return dir
}

// runHelm runs the helm of make tools against the stack and returns its output.
func runHelm(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	tools, err := localstack.ToolsDir()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, filepath.Join(tools, "helm"), append(args, "--kubeconfig", stack.Kubeconfig)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

func installContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	// The CRDs stay owned by one server-side apply, whichever test runs first; helm
	// leaves CRDs that exist alone.
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(repoRoot(t), "deploy", "crds")))
	return ctx
}

func startFakeGitHub(t *testing.T) *fakegithub.Server {
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	return gh
}

// runInstalled starts the worker and webhook Deployments of system on this host
// from the unpacked image, applies an HRA and a RunnerDeployment in runners, and
// follows one signed queued delivery to a registered runner; at the end it
// deletes them and waits for the drain, still under the installed RBAC.
func runInstalled(t *testing.T, ctx context.Context, img *unpackedImage, gh *fakegithub.Server, system, workerName, webhookName, runners string) {
	// Its Temporal namespace is named as the runners' namespace. The Helm
	// chart's worker would register it too (temporal.setup); the kustomize
	// base's is told to use it.
	useTemporalNamespace(t, ctx, runners)
	kube, err := stack.Kube()
	require.NoError(t, err)
	_, _ = stack.Kubectl(ctx, "create", "namespace", runners) // the Helm test made it before its install
	ports, err := localstack.FreePorts(2)
	require.NoError(t, err)

	worker := hostRun(t, ctx, kube, system, workerName, "worker", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	webhook := hostRun(t, ctx, kube, system, webhookName, "webhook", "--webhook-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]))
	requireSameAutoscalingFlags(t, worker.container, webhook.container)
	workerProc := worker.container.start(img)
	workerProc.waitReady(t, ctx, worker.readyURL)
	webhookProc := webhook.container.start(img)
	webhookProc.waitReady(t, ctx, webhook.readyURL)

	rctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	registrar := &sim.Runners{Kube: kube, GitHub: gh, Namespace: runners, ManualJobs: true, RegisterDelay: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	go func() { _ = registrar.Run(rctx) }()

	// Registered before the apply, so it runs before the processes stop
	// (cleanups run last first).
	t.Cleanup(func() { drainInstalled(t, kube, runners, gh, workerProc, webhookProc) })
	applyHelloPool(t, ctx, runners)

	// Until the webhook's informer has the HRA it answers 200 "no autoscaler
	// matches"; anything but 200 or 202 fails at once.
	url := "http://" + webhook.addr + "/webhook"
	queued := jobDelivery(t, "install-q1", "queued", 4001)
	eventually(t, ctx, "the webhook accepts the queued delivery", func() bool {
		status, text := queued.send(t, url)
		require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, text)
		if status == http.StatusOK {
			require.Contains(t, text, "no horizontalrunnerautoscaler", "200 only while the informer catches up")
		}
		if status == http.StatusAccepted {
			t.Logf("POST %s (workflow_job queued, signed) -> %d %s", url, status, strings.TrimSpace(text))
		}
		return status == http.StatusAccepted
	})

	var pod corev1.Pod
	eventually(t, ctx, "the worker creates a runner pod", func() bool {
		list, err := kube.CoreV1().Pods(runners).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
		require.NoError(t, err)
		if len(list.Items) == 0 {
			return false
		}
		pod = list.Items[0]
		return true
	})
	t.Logf("runner pod created: %s/%s", pod.Namespace, pod.Name)
	eventually(t, ctx, "the runner registers with a token the worker got from GitHub", func() bool { return len(gh.Runners()) == 1 })
	t.Logf("runner registered in the fake GitHub: %s", gh.Runners()[0].Name)
}

// requireSameAutoscalingFlags checks that the worker and the webhook get the same
// autoscaling settings: either may start an autoscaler workflow (the webhook does
// when a delivery comes first), and both compute its spec from these flags.
func requireSameAutoscalingFlags(t *testing.T, worker, webhook *hostContainer) {
	for _, flag := range []string{"--default-scale-down-delay", "--sync-period", "--batch-window", "--reconcile-period"} {
		value := func(c *hostContainer) string {
			for _, arg := range c.args {
				if v, ok := strings.CutPrefix(arg, flag+"="); ok {
					return v
				}
			}
			return "(default)"
		}
		require.Equal(t, value(worker), value(webhook), "%s: the worker and the webhook disagree", flag)
	}
}

// installedContainer is a Deployment's container ready to start, and the URL its
// readiness probe would ask.
type installedContainer struct {
	container *hostContainer
	addr      string
	readyURL  string
}

// hostRun reads a Deployment back from the API server and resolves its container
// for this host. Exactly two things change, and the test fails if the rendered
// args do not have the listen flag: the listen address (the pod's port may be
// taken here) and KUBECONFIG (a pod would use its ServiceAccount's mounted token;
// here a token of the same ServiceAccount from the TokenRequest API).
func hostRun(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, deployment, container, listenFlag, addr string) installedContainer {
	d, err := kube.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
	require.NoError(t, err)
	c := resolveContainer(t, ctx, kube, d, container)
	rendered := c.overrideFlag(listenFlag, addr, "the pod's port may be taken on this host")
	path := c.readinessPath(rendered)
	sa := d.Spec.Template.Spec.ServiceAccountName
	c.setEnv("KUBECONFIG", serviceAccountKubeconfig(t, ctx, kube, ns, sa), "in a pod: the mounted token of serviceaccount "+sa)
	require.Equal(t, []string{listenFlag, "KUBECONFIG"}, c.overridden(), "the only overrides")
	require.Empty(t, c.mapped, "the default install mounts no files")
	return installedContainer{container: c, addr: addr, readyURL: "http://" + addr + path}
}

// drainInstalled deletes the test's pools while the installed worker still runs,
// waits until their runners are unregistered and their pods gone, and checks that
// the API server never refused the processes.
func drainInstalled(t *testing.T, kube kubernetes.Interface, ns string, gh *fakegithub.Server, procs ...*hostProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := stack.Kubectl(ctx, "delete", "-n", ns, "hra,rdeploy", "--all")
	require.NoError(t, err, out)
	eventually(t, ctx, "the pool drains after the delete", func() bool {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
		return err == nil && len(list.Items) == 0 && len(gh.Runners()) == 0
	})
	eventually(t, ctx, "the pool workflow ends", func() bool {
		out, err := temporalCLI(ctx, ns, "workflow", "describe", "--workflow-id", contract.PoolWorkflowID(ns, "RunnerDeployment", "hello"), "--output", "json")
		return err == nil && strings.Contains(out, "WORKFLOW_EXECUTION_STATUS_COMPLETED")
	})
	for _, p := range procs {
		require.NotContains(t, p.output(), "forbidden", "%s was never refused under the installed RBAC", p.name)
	}
}

// applyHelloPool applies hraManifest (the RunnerDeployment and HRA "hello")
// with kubectl, as a user would, and waits until the worker accepts the HRA.
func applyHelloPool(t *testing.T, ctx context.Context, ns string) {
	manifest := filepath.Join(t.TempDir(), "hra.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(hraManifest), 0o644))
	out, err := stack.Kubectl(ctx, "apply", "-n", ns, "-f", manifest)
	require.NoError(t, err, out)
	eventually(t, ctx, "the installed worker accepts the autoscaler", func() bool {
		out, err := stack.JSONPath(ctx, ns, "hra", "hello", `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	})
}

// eventually polls cond every 200 ms until it holds or ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			require.FailNow(t, "timed out: "+what)
		case <-tick.C:
		}
	}
}
