package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// The kustomize base's RBAC is enough, and no more is needed: the worker runs
// with the arcflow-worker ServiceAccount's token (the API server authorizes with
// RBAC) through a whole scale up, status write, scale down and delete.
//
// Not parallel: it applies the base's cluster-wide ClusterRole and binding,
// as TestKustomizeBaseRunsWhatItDeploys does.
func TestWorkerRunsWithTheBaseRBACAlone(t *testing.T) {
	const ns, system = "rbac", "arcflow-system"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(repoRoot(t), "deploy", "crds")))
	createNamespace(t, ctx, ns)
	useTemporalNamespace(t, ctx, ns)
	_, _ = stack.Kubectl(ctx, "create", "namespace", system)
	out, err := stack.Kubectl(ctx, "apply", "-n", system, "-f", filepath.Join(repoRoot(t), "deploy", "kustomize", "base", "rbac.yaml"))
	require.NoError(t, err, out)
	token, err := stack.Kubectl(ctx, "create", "token", "arcflow-worker", "-n", system, "--duration=1h")
	require.NoError(t, err, token)

	kubeconfig := filepath.Join(t.TempDir(), "worker.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["arcflow"] = &clientcmdapi.Cluster{Server: stack.RESTConfig.Host, CertificateAuthorityData: stack.RESTConfig.CAData}
	kc.AuthInfos["worker"] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(token)}
	kc.Contexts["arcflow"] = &clientcmdapi.Context{Cluster: "arcflow", AuthInfo: "worker"}
	kc.CurrentContext = "arcflow"
	require.NoError(t, clientcmd.WriteToFile(*kc, kubeconfig))

	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	kube, err := stack.Kube()
	require.NoError(t, err)
	rctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	runners := &sim.Runners{Kube: kube, GitHub: gh, Namespace: ns, ManualJobs: true, RegisterDelay: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	go func() { _ = runners.Run(rctx) }()
	worker := startProcess(t, []string{
		"KUBECONFIG=" + kubeconfig, "TEMPORAL_ADDRESS=" + stack.TemporalAddress, "TEMPORAL_NAMESPACE=" + ns,
		"GITHUB_TOKEN=ghp_e2e", "GITHUB_URL=" + gh.URL, "POD_NAMESPACE=" + system, "ARCFLOW_LEASE_DURATION=3s",
		// The status write is what is checked, not its pacing: 30 s of
		// waiting for it were most of this test, which runs alone.
		"ARCFLOW_POOL_STATUS_INTERVAL=1s",
	}, "worker", "--metrics-addr=127.0.0.1:0", "--enable-leader-election", "--log-level=warn", "--watch-namespace="+ns)

	manifest := filepath.Join(t.TempDir(), "rd.yaml")
	apply := func(replicas string) {
		require.NoError(t, os.WriteFile(manifest, []byte(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
spec:
  replicas: `+replicas+`
  template:
    spec:
      repository: octo/app
      labels: [linux]
`), 0o644))
		out, err := stack.Kubectl(ctx, "apply", "-n", ns, "-f", manifest)
		require.NoError(t, err, out)
	}
	pods := func() int {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
		require.NoError(t, err)
		return len(list.Items)
	}
	apply("2")
	require.Eventually(t, func() bool { return pods() == 2 && len(gh.Runners()) == 2 }, time.Minute, 200*time.Millisecond, "two runners created under the worker's RBAC")
	require.Eventually(t, func() bool {
		out, err := stack.JSONPath(ctx, ns, "rdeploy", "app", "{.status.availableReplicas}")
		return err == nil && out == "2"
	}, time.Minute, 200*time.Millisecond, "status written under the worker's RBAC")
	apply("0")
	require.Eventually(t, func() bool { return pods() == 0 && len(gh.Runners()) == 0 }, time.Minute, 200*time.Millisecond, "unregistered and deleted under the worker's RBAC")
	out, err = stack.Kubectl(ctx, "delete", "-n", ns, "rdeploy", "app")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool {
		out, err := temporalCLI(ctx, ns, "workflow", "describe", "--workflow-id", "pool/rbac/runnerdeployment/app", "--output", "json")
		return err == nil && strings.Contains(out, "WORKFLOW_EXECUTION_STATUS_COMPLETED")
	}, time.Minute, 200*time.Millisecond, "the pool workflow ends after the delete")
	worker.kill()
	require.NotContains(t, worker.out.String(), "forbidden", "the worker was never refused")
}
