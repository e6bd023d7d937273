package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// `arcflow all` is the worker and the webhook in one process: a signed
// workflow_job delivery to it scales a runner that takes the job, one /metrics
// serves both parts' metrics, and SIGTERM stops it cleanly.
func TestAllInOneProcessScalesFromASignedDelivery(t *testing.T) {
	parallel(t)
	const ns = "all-in-one"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	useTemporalNamespace(t, ctx, ns)
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(repoRoot(t), "deploy", "crds")))
	createNamespace(t, ctx, ns)
	kube, err := stack.Kube()
	require.NoError(t, err)
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	simCtx, stopSim := context.WithCancel(context.Background())
	t.Cleanup(stopSim)
	runners := &sim.Runners{Kube: kube, GitHub: gh, Namespace: ns, Log: log, RegisterDelay: 100 * time.Millisecond,
		JobDuration: func(fakegithub.JobInfo) time.Duration { return time.Second }}
	go func() { _ = runners.Run(simCtx) }()

	ports, err := localstack.FreePorts(2)
	require.NoError(t, err)
	webhookURL := fmt.Sprintf("http://127.0.0.1:%d/webhook", ports[0])
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1])
	all := startProcess(t, []string{
		"KUBECONFIG=" + stack.Kubeconfig, "TEMPORAL_ADDRESS=" + stack.TemporalAddress, "TEMPORAL_NAMESPACE=" + ns,
		"GITHUB_TOKEN=ghp_e2e", "GITHUB_URL=" + gh.URL, "POD_NAMESPACE=" + ns,
		"GITHUB_WEBHOOK_SECRET_TOKEN=" + world.WebhookSecret, "ARCFLOW_LEASE_DURATION=3s",
	}, "all", "--enable-leader-election", "--log-level=warn", "--watch-namespace="+ns,
		fmt.Sprintf("--webhook-addr=127.0.0.1:%d", ports[0]), fmt.Sprintf("--metrics-addr=127.0.0.1:%d", ports[1]))
	// The webhook part listens once its HRA index is filled; a Deployment's
	// readiness probe waits for this too.
	require.Eventually(t, func() bool { return get200(ctx, strings.TrimSuffix(webhookURL, "/webhook")+"/healthz") },
		60*time.Second, 100*time.Millisecond, "the webhook part serves")
	sender := &sim.Sender{URL: webhookURL, Secret: []byte(world.WebhookSecret), Log: log}
	sender.Start(simCtx)
	gh.OnJobEvent(func(e fakegithub.JobEvent) {
		runners.Notice(e)
		sender.Send(e)
	})

	_, err = stack.Kubectl(ctx, "apply", "-n", ns, "-f", writeManifest(t, fullPathRunnerDeployment))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		out, err := stack.JSONPath(ctx, ns, "hra", "app", `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	}, 60*time.Second, 200*time.Millisecond, "the worker part accepted the autoscaler")
	tc := dialTemporal(t, ns)
	pool := contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "app")
	require.Eventually(t, func() bool { return len(podNames(t, ns)) == 0 && world.PoolAtZero(ctx, tc, pool) },
		60*time.Second, 200*time.Millisecond, "the pool settles at minReplicas 0")
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "hra,rdeploy", "--all", "--wait=false")
		require.Eventually(t, func() bool { return len(podNames(t, ns)) == 0 && len(gh.Runners()) == 0 },
			90*time.Second, 200*time.Millisecond, "the pool drained after delete")
	})

	start := time.Now()
	gh.QueueJob("octo-org/app", "build", []string{"self-hosted", "linux", "build"})
	if !assert.Eventually(t, func() bool {
		jobs := gh.Jobs()
		return len(jobs) == 1 && jobs[0].Status == "completed"
	}, 60*time.Second, 100*time.Millisecond, "the delivery scaled a runner that ran the job") {
		t.Fatalf("at the deadline: deliveries %+v; jobs %+v", sender.Stats(), gh.Jobs())
	}
	require.Equal(t, "success", gh.Jobs()[0].Conclusion)
	created := 0
	for _, p := range runners.PodTimes() {
		if p.Created.After(start) {
			created++
		}
	}
	require.Equal(t, 1, created, "one runner pod for the one job")
	stats := sender.Stats()
	require.Zero(t, stats.Rejected+stats.Failed, "every delivery accepted")

	// One registry: the worker's and the webhook's metrics on --metrics-addr.
	metrics := readAllMetrics(t, metricsURL)
	for _, name := range []string{
		`arcflow_webhook_deliveries_total{event="workflow_job",result="accepted"}`,
		`horizontalrunnerautoscaler_spec_max_replicas{horizontalrunnerautoscaler="app",namespace="` + ns + `"} 4`,
		`arcflow_github_calls_total{`, `temporal_request{`,
	} {
		require.Contains(t, metrics, name)
	}
	t.Logf("arcflow all: one job scaled and ran in %v; resident %d MiB now, peak %d MiB",
		time.Since(start).Round(time.Millisecond), procStatusMiB(t, all, "VmRSS:"), procStatusMiB(t, all, "VmHWM:"))

	// The runner that ran the job goes while the process runs: the drain
	// after the SIGTERM below has no worker left to remove it.
	require.Eventually(t, func() bool { return len(podNames(t, ns)) == 0 && len(gh.Runners()) == 0 },
		60*time.Second, 200*time.Millisecond, "the runner that ran the job is gone")

	// SIGTERM: both parts stop and the process exits 0.
	require.NoError(t, all.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- all.cmd.Wait() }()
	select {
	case err := <-exited:
		all.cmd = nil
		require.NoError(t, err, "arcflow all exits cleanly on SIGTERM:\n%s", all.out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("arcflow all did not stop within 30s of SIGTERM")
	}
}

func writeManifest(t *testing.T, manifest string) string {
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, []byte(manifest), 0o644))
	return path
}

func podNames(t *testing.T, ns string) []string {
	out, err := stack.Kubectl(context.Background(), "get", "pods", "-n", ns, "-l", activities.LabelRunner, "-o", "name")
	require.NoError(t, err, out)
	return strings.Fields(out)
}

func readAllMetrics(t *testing.T, url string) string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// procStatusMiB reads a /proc/<pid>/status figure of a running process.
func procStatusMiB(t *testing.T, p *arcflowProcess, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			require.NoError(t, err)
			return kb / 1024
		}
	}
	t.Fatalf("%s not in /proc/%d/status", key, p.cmd.Process.Pid)
	return 0
}
