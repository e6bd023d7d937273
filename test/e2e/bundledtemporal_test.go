package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/tools/image"
	"github.com/arcflow/arcflow/workflows/contract"
)

// The chart's default install: no temporal.address, so the release runs its own
// Temporal. Its StatefulSet's container runs on this host from the Temporal image
// (built as make image-temporal builds it) with its rendered command, args and
// env; the worker and webhook Deployments run as in TestHelmInstallRunsWhatItRenders,
// connected to it, and turn a signed delivery into a registered runner. The
// server then restarts from its SQLite file and still has the pool's history.
func TestHelmInstallRunsTheBundledTemporal(t *testing.T) {
	parallel(t)
	const release, system, runners = "arcflow-bundled", "arcflow-bundled", "bundled-runners"
	r := installBundled(t, release, system, runners)
	ctx, kube, gh, server := r.ctx, r.kube, r.gh, r.server
	workerProc, webhookProc := r.worker, r.webhook

	rctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	registrar := &sim.Runners{Kube: kube, GitHub: gh, Namespace: runners, ManualJobs: true, RegisterDelay: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	go func() { _ = registrar.Run(rctx) }()

	applyHelloPool(t, ctx, runners)
	url := r.webhookURL
	queued := jobDelivery(t, "bundled-q1", "queued", 4101)
	eventually(t, ctx, "the webhook accepts the queued delivery", func() bool {
		status, text := queued.send(t, url)
		require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, status, text)
		return status == http.StatusAccepted
	})
	eventually(t, ctx, "the worker creates a runner pod", func() bool {
		list, err := kube.CoreV1().Pods(runners).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
		require.NoError(t, err)
		return len(list.Items) == 1
	})
	eventually(t, ctx, "the runner registers with a token the worker got from GitHub", func() bool { return len(gh.Runners()) == 1 })
	t.Logf("runner registered in the fake GitHub through the bundled Temporal: %s", gh.Runners()[0].Name)

	// The pool drains through the bundled Temporal, still under the installed RBAC.
	out, err := stack.Kubectl(ctx, "delete", "-n", runners, "hra,rdeploy", "--all")
	require.NoError(t, err, out)
	eventually(t, ctx, "the pool drains after the delete", func() bool {
		list, err := kube.CoreV1().Pods(runners).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
		return err == nil && len(list.Items) == 0 && len(gh.Runners()) == 0
	})
	poolID := contract.PoolWorkflowID(runners, "RunnerDeployment", "hello")
	eventually(t, ctx, "the pool workflow ends", func() bool { return server.completed(ctx, poolID) })
	for _, p := range []*hostProcess{workerProc, webhookProc} {
		require.NotContains(t, p.output(), "forbidden", "%s was never refused under the installed RBAC", p.name)
	}

	// What the claim is for: a new server process on the same file has the history.
	server.stop()
	server.start(t, ctx)
	require.True(t, server.completed(ctx, poolID), "the pool's history survives a restart of the bundled Temporal")
}

// bundledRelease is the chart installed with its defaults, so with the bundled
// Temporal: the Temporal of its StatefulSet and the worker and webhook of its
// Deployments run on this host from their images.
type bundledRelease struct {
	ctx                   context.Context
	name, system, runners string
	// values are the --set flags of the install, as a values file would hold them.
	values          []string
	img             *unpackedImage
	kube            kubernetes.Interface
	gh              *fakegithub.Server
	server          *bundledServer
	worker, webhook *hostProcess
	// webhookAddr is where the webhook listens; webhookURL is where GitHub's
	// deliveries go.
	webhookAddr, webhookURL string
}

// installBundled runs helm install with no temporal.address, starts the bundled
// Temporal from its rendered StatefulSet, checks it made arcflow's search
// attributes, and starts the worker and the webhook connected to it.
func installBundled(t *testing.T, release, system, runners string) *bundledRelease {
	img := arcflowImage(t) // both before the test's deadline starts: cold builds take minutes
	timg := temporalImage(t)
	ctx := installContext(t)
	gh := startFakeGitHub(t)
	createNamespace(t, ctx, runners)
	values := []string{
		"--set", "githubEnterpriseServerURL=" + gh.URL,
		"--set", "authSecret.create=true", "--set", "authSecret.github_token=ghp_bundled",
		"--set", "githubWebhookServer.secret.create=true",
		"--set", "githubWebhookServer.secret.github_webhook_secret_token=" + webhookSecret,
		"--set", "scope.singleNamespace=true", "--set", "scope.watchNamespace=" + runners, "--set", "arcController.lease=",
		// The runner pod policy for the runners' namespace alone: tests beside
		// this one run their own runner pods.
		"--set", "runnerPodProtection.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=" + runners,
	}
	out := runHelm(t, ctx, append([]string{"install", release, chartDir(t), "--namespace", system, "--create-namespace"}, values...)...)
	require.Contains(t, out, "STATUS: deployed")
	t.Cleanup(func() {
		runHelm(t, ctx, "uninstall", release, "--namespace", system)
		// A StatefulSet's claims outlive it, as they would in a cluster.
		_, _ = stack.Kubectl(context.Background(), "delete", "pvc", "-n", system, "--all", "--wait=false")
	})
	kube, err := stack.Kube()
	require.NoError(t, err)

	server := bundledTemporal(t, ctx, kube, system, release+"-temporal", timg)
	require.Equal(t, release+"-temporal:7233", server.serviceAddr)
	server.start(t, ctx)
	requireArcflowSearchAttributes(t, ctx, server)

	ports, err := localstack.FreePorts(2)
	require.NoError(t, err)
	worker := bundledHostRun(t, ctx, kube, system, release+"-worker", "worker", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", ports[0]), server)
	webhook := bundledHostRun(t, ctx, kube, system, release+"-webhook", "webhook", "--webhook-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]), server)
	workerProc := worker.container.start(img)
	workerProc.waitReady(t, ctx, worker.readyURL)
	webhookProc := webhook.container.start(img)
	webhookProc.waitReady(t, ctx, webhook.readyURL)
	return &bundledRelease{ctx: ctx, name: release, system: system, runners: runners, values: values, img: img, kube: kube, gh: gh,
		server: server, worker: workerProc, webhook: webhookProc, webhookAddr: webhook.addr, webhookURL: "http://" + webhook.addr + "/webhook"}
}

// chartDir is the chart in this clone.
func chartDir(t *testing.T) string { return filepath.Join(repoRoot(t), "deploy", "helm", "arcflow") }

// bundledServer is the bundled Temporal's container of the rendered StatefulSet
// made into a host process.
type bundledServer struct {
	program, namespace, addr string
	// serviceAddr is what the release's pods dial: the Service and the frontend port.
	serviceAddr string
	args, env   []string
	log         string
	proc        *exec.Cmd
	exited      chan struct{}
}

// bundledTemporal reads the StatefulSet back from the API server and resolves
// its container for this host. Exactly two kinds of things change: the volumes'
// mount paths (the claim and the emptyDir) become directories of the test, and
// the frontend and UI ports become free loopback ports (7233 and 8233 may be
// taken here). The test fails on anything else it would have to change.
func bundledTemporal(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, name string, timg *unpackedImage) *bundledServer {
	sts, err := kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 1, *sts.Spec.Replicas, "one server on one SQLite file")
	require.Len(t, sts.Spec.VolumeClaimTemplates, 1)
	require.Len(t, sts.Spec.Template.Spec.Containers, 1)
	c := sts.Spec.Template.Spec.Containers[0]
	t.Logf("%s/%s rendered command: %q", ns, name, append(slices.Clone(c.Command), c.Args...))
	args := slices.Clone(c.Args)
	var env []string
	for _, v := range c.Env {
		require.Nil(t, v.ValueFrom, "%s: only plain values are resolved here", v.Name)
		env = append(env, v.Name+"="+v.Value)
	}
	t.Logf("%s/%s rendered env: %q", ns, name, env)
	dirs := map[string]string{}
	for _, m := range c.VolumeMounts {
		dirs[m.MountPath] = filepath.Join(t.TempDir(), m.Name)
		require.NoError(t, os.MkdirAll(dirs[m.MountPath], 0o700))
	}
	for _, list := range [][]string{args, env} {
		for i, s := range list {
			// --flag=/mount/path/file or VAR=/mount/path, each value mapped once.
			key, value, _ := strings.Cut(s, "=")
			for mountPath, dir := range dirs {
				if value == mountPath || strings.HasPrefix(value, mountPath+"/") {
					list[i] = key + "=" + dir + strings.TrimPrefix(value, mountPath)
					t.Logf("%s/%s override: %s -> %s (the volume at %s is a directory of the test)", ns, name, s, list[i], mountPath)
				}
			}
		}
	}
	ports, err := localstack.FreePorts(3)
	require.NoError(t, err)
	portOf := map[string]int{}
	for i, flag := range []string{"--port", "--ui-port", "--metrics-port"} {
		at := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, flag+"=") })
		require.GreaterOrEqual(t, at, 0, "%s renders %s", name, flag)
		rendered, err := strconv.Atoi(strings.TrimPrefix(args[at], flag+"="))
		require.NoError(t, err)
		portOf[flag] = rendered
		args[at] = fmt.Sprintf("%s=%d", flag, ports[i])
		t.Logf("%s/%s override: %s=%d -> %s (the port may be taken on this host)", ns, name, flag, rendered, args[at])
	}
	// The kubelet's readiness probe is the frontend's gRPC health of the
	// WorkflowService, which the SDK's CheckHealth asks (start waits on it).
	probe := c.ReadinessProbe
	require.True(t, probe != nil && probe.GRPC != nil, "a gRPC readiness probe")
	require.EqualValues(t, portOf["--port"], probe.GRPC.Port, "the probe asks the frontend's port")
	require.Equal(t, "temporal.api.workflowservice.v1.WorkflowService", *probe.GRPC.Service)

	program, args := timg.program(t, c.Command, args)
	namespace := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--namespace="); ok {
			namespace = v
		}
	}
	require.NotEmpty(t, namespace, "the server creates arcflow's namespace")
	return &bundledServer{program: program, namespace: namespace, addr: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		serviceAddr: fmt.Sprintf("%s:%d", sts.Spec.ServiceName, portOf["--port"]),
		args:        args, env: timg.environ(env), log: filepath.Join(t.TempDir(), "temporal.log")}
}

// start runs the server and waits until its frontend is healthy. The process
// gets SIGTERM when the test ends, and SIGKILL if the test binary dies.
func (s *bundledServer) start(t *testing.T, ctx context.Context) {
	out, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	s.proc = exec.Command(s.program, s.args...)
	s.proc.Env, s.proc.Stdout, s.proc.Stderr = s.env, out, out
	s.proc.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t.Logf("bundled Temporal started: env -i %s %s %s", strings.Join(s.env, " "), s.program, strings.Join(s.args, " "))
	require.NoError(t, s.proc.Start())
	exited := make(chan struct{})
	s.exited = exited
	go func() { _ = s.proc.Wait(); _ = out.Close(); close(exited) }()
	t.Cleanup(s.stop)

	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := client.Dial(client.Options{HostPort: s.addr, Namespace: s.namespace, Logger: slog.New(slog.DiscardHandler)}); err == nil {
			_, err = c.CheckHealth(wctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				t.Logf("bundled Temporal serving at %s", s.addr)
				return
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(s.log)
			require.FailNow(t, "the bundled Temporal exited before it served", string(log))
		case <-wctx.Done():
			log, _ := os.ReadFile(s.log)
			require.FailNow(t, "the bundled Temporal never served at "+s.addr, string(log))
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, as a pod's deletion does, and SIGKILL after 10 s.
func (s *bundledServer) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.proc.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.proc.Process.Kill()
		<-s.exited
	}
}

// cli runs the image's temporal as a client of the server.
func (s *bundledServer) cli(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.program, append(args, "--address", s.addr, "--namespace", s.namespace)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *bundledServer) completed(ctx context.Context, workflowID string) bool {
	out, err := s.cli(ctx, "workflow", "describe", "--workflow-id", workflowID, "--output", "json")
	return err == nil && strings.Contains(out, "WORKFLOW_EXECUTION_STATUS_COMPLETED")
}

// requireArcflowSearchAttributes: the server registered, at start, what
// `arcflow setup` registers.
func requireArcflowSearchAttributes(t *testing.T, ctx context.Context, s *bundledServer) {
	out, err := s.cli(ctx, "operator", "search-attribute", "list", "--output", "json")
	require.NoError(t, err, out)
	for name := range contract.SearchAttributeTypes() {
		require.Contains(t, out, `"`+name+`"`, "search attribute %s in namespace %s", name, s.namespace)
	}
}

// bundledHostRun is hostRun for a release with the bundled Temporal: the same
// two overrides, and TEMPORAL_ADDRESS, whose rendered value is the Temporal
// Service's name, which resolves only in the cluster.
func bundledHostRun(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, deployment, container, listenFlag, addr string, server *bundledServer) installedContainer {
	d, err := kube.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
	require.NoError(t, err)
	c := resolveContainer(t, ctx, kube, d, container)
	require.Equal(t, server.serviceAddr, c.lookup("TEMPORAL_ADDRESS"), "the release's own Temporal Service")
	require.Equal(t, server.namespace, c.lookup("TEMPORAL_NAMESPACE"), "the namespace the server creates")
	rendered := c.overrideFlag(listenFlag, addr, "the pod's port may be taken on this host")
	path := c.readinessPath(rendered)
	c.setEnv("TEMPORAL_ADDRESS", server.addr, "the Service's name resolves only in the cluster; the bundled Temporal of its StatefulSet listens here")
	sa := d.Spec.Template.Spec.ServiceAccountName
	c.setEnv("KUBECONFIG", serviceAccountKubeconfig(t, ctx, kube, ns, sa), "in a pod: the mounted token of serviceaccount "+sa)
	require.Equal(t, []string{listenFlag, "TEMPORAL_ADDRESS", "KUBECONFIG"}, c.overridden(), "the only overrides")
	require.Empty(t, c.mapped, "the default install mounts no files")
	require.Empty(t, c.lookup("TEMPORAL_TLS"), "the bundled Temporal serves plain gRPC inside the cluster")
	return installedContainer{container: c, addr: addr, readyURL: "http://" + addr + path}
}

// temporalImage is the bundled Temporal's image for this machine's platform,
// built as make image-temporal does and unpacked (builtTemporalImage).
func temporalImage(t *testing.T) *unpackedImage {
	t.Helper()
	img, err := builtTemporalImage()
	require.NoError(t, err)
	return img
}

func buildUnpackedTemporalImage() (*unpackedImage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp(buildsDir, "arcflow-temporal-image-")
	if err != nil {
		return nil, err
	}
	platform := image.Platform("linux/" + runtime.GOARCH)
	res, err := image.BuildTemporal(ctx, image.Options{OutDir: filepath.Join(dir, "oci"), Platforms: []image.Platform{platform}})
	if err != nil {
		return nil, err
	}
	if err := image.VerifyTemporal(res.Images[0].Image, platform, res.Metadata); err != nil {
		return nil, err
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := image.Unpack(res.Layout, platform, rootfs); err != nil {
		return nil, err
	}
	config, err := res.Images[0].Image.ConfigFile()
	if err != nil {
		return nil, err
	}
	return &unpackedImage{rootfs: rootfs, entrypoint: config.Config.Entrypoint, env: config.Config.Env, workingDir: config.Config.WorkingDir}, nil
}
