package fullpath

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Config is one run of the scenario.
type Config struct {
	Stack    *localstack.Stack
	RepoRoot string
	// Binary is a built `arcflow`.
	Binary string
	// Namespace is the run's own Kubernetes namespace.
	Namespace string
	// Manifest is RunnerDeployment or RunnerSet; Name the name of its autoscaler
	// and of the pool it scales.
	Manifest, Name string
	// TemporalNamespace, when set, is a Temporal namespace of the run's own,
	// registered on the stack's server; empty is Temporal's "default".
	TemporalNamespace string
}

// Jobs is how many jobs the scenario queues.
const Jobs = 6

// Result is what a run saw.
type Result struct {
	// RunnerPods names every runner pod the run created, gone by the end.
	RunnerPods []string
}

// Run is the whole path, as in production: GitHub queues jobs and sends signed
// workflow_job webhooks; `arcflow webhook` signals the autoscaler; `arcflow
// worker` scales the pool; simulated runners register, take the jobs, finish them
// and exit; after the scale-down delay nothing is left. It fails t on any
// deviation; a cleanup deletes the resources and stops the world.
func Run(t *testing.T, cfg Config) Result {
	stack, ns, hra := cfg.Stack, cfg.Namespace, cfg.Name
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	temporalNS := cfg.TemporalNamespace
	if temporalNS != "" {
		require.NoError(t, stack.AddTemporalNamespace(ctx, temporalNS))
	} else {
		temporalNS = "default"
	}
	temporalCLI := func(args ...string) string {
		out, _ := stack.Temporal(context.Background(), append(args, "--namespace", temporalNS)...)
		return out
	}
	w, err := world.Start(ctx, world.Config{
		Stack: stack, RepoRoot: cfg.RepoRoot, Namespace: ns, TemporalNamespace: cfg.TemporalNamespace, Dir: t.TempDir(), Binary: cfg.Binary,
		Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second,
		Seed: 1,
		Log:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("jobs: %+v", w.GitHub.Jobs())
			t.Logf("runners: %+v", w.GitHub.Runners())
			t.Logf("pods: %v", RunnerPods(t, w))
			podsOut, _ := stack.Kubectl(context.Background(), "get", "pods,sts,secrets", "-n", ns, "-o", "wide")
			t.Logf("kubectl:\n%s", podsOut)
			out := temporalCLI("workflow", "show", "--output", "json", "--workflow-id", "hra/"+ns+"/"+hra)
			_ = os.WriteFile("/tmp/hra-history.json", []byte(out), 0o644)
			pools := temporalCLI("workflow", "list", "--query", "WorkflowType='PoolWorkflow'")
			t.Logf("pools: %s", pools)
			for _, kind := range []string{"runnerdeployment", "runnerset"} {
				out := temporalCLI("workflow", "show", "--output", "json", "--workflow-id", "pool/"+ns+"/"+kind+"/"+hra)
				_ = os.WriteFile("/tmp/pool-history-"+kind+".json", []byte(out), 0o644)
			}
			t.Logf("autoscaler history:\n%s", out)
			logProcess(t, w.Worker)
			logProcess(t, w.Webhook)
		}
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "hra,rdeploy,runnerset", "--all", "--wait=false")
		require.Eventually(t, func() bool { return len(RunnerPods(t, w)) == 0 && len(w.GitHub.Runners()) == 0 },
			90*time.Second, 200*time.Millisecond, "pools drained after delete")
		require.NoError(t, w.Stop())
	})
	require.NoError(t, w.Apply(ctx, cfg.Manifest))
	require.Eventually(t, func() bool {
		out, err := stack.JSONPath(ctx, ns, "hra", hra, `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	}, 60*time.Second, 200*time.Millisecond, "the autoscaler is accepted")
	tc, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Namespace: temporalNS, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer tc.Close()
	kind := v1alpha1.KindRunnerDeployment // the pool cfg.Manifest's autoscaler scales
	if cfg.Manifest == RunnerSet {
		kind = v1alpha1.KindRunnerSet
	}
	pool := contract.PoolWorkflowID(ns, kind, hra)
	require.Eventually(t, func() bool {
		out, err := stack.JSONPath(ctx, ns, "hra", hra, "{.status.desiredReplicas}")
		return err == nil && out == "0" && len(RunnerPods(t, w)) == 0 && world.PoolAtZero(ctx, tc, pool)
	}, 60*time.Second, 200*time.Millisecond, "the pool settles at minReplicas 0")

	start := time.Now()
	require.NoError(t, sim.Workload{Jobs: Jobs, Repositories: []string{"octo-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "build"}}}.
		Run(ctx, w.Queue))

	maxPods, maxObjects := 0, 0
	require.Eventually(t, func() bool {
		pods := runnerPodList(t, w)
		maxPods, maxObjects = max(maxPods, activePods(pods)), max(maxObjects, len(pods))
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" {
				done++
			}
		}
		return done == Jobs
	}, 40*time.Second, 100*time.Millisecond, "every job ran to completion")
	allDone := time.Since(start)
	require.Eventually(t, func() bool { return len(RunnerPods(t, w)) == 0 && len(w.GitHub.Runners()) == 0 },
		90*time.Second, 200*time.Millisecond, "no runner pod and no registered runner after the scale-down delay")
	// The pool's own replicas (1 when a manifest leaves it out, as ARC's do)
	// created a runner before the autoscaler first spoke; only later pods are the
	// jobs' cost.
	var result Result
	forJobs := 0
	for _, p := range w.Runners.PodTimes() {
		result.RunnerPods = append(result.RunnerPods, p.Name)
		if p.Created.After(start) {
			forJobs++
		}
	}
	t.Logf("%d jobs done in %v; scaled to zero %v later; %d runner pods created for them (%d in all); at most %d active at once (%d pod objects, finished ones included)",
		Jobs, allDone.Round(time.Millisecond), (time.Since(start) - allDone).Round(time.Millisecond), forJobs, len(w.Runners.PodTimes()), maxPods, maxObjects)

	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "job %d", j.ID)
	}
	require.Empty(t, w.Runners.Violations())
	require.LessOrEqual(t, maxPods, 4, "never more active runner pods than maxReplicas")
	require.LessOrEqual(t, forJobs, Jobs, "one runner pod per job at most")
	// The last job's completed delivery may still be on its way: the job is
	// done on GitHub before its webhook is answered.
	require.NoError(t, w.Sender.Flush(ctx))
	stats := w.Sender.Stats()
	require.Zero(t, stats.Rejected+stats.Failed, "every delivery accepted")
	require.Equal(t, 3*Jobs, stats.Accepted, "queued, in_progress and completed for each job")

	// Both processes serve ARC's metric names and arcflow's own on /metrics.
	workerMetrics := scrape(t, w.WorkerMetricsURL)
	for _, name := range []string{
		`horizontalrunnerautoscaler_spec_max_replicas{horizontalrunnerautoscaler="` + hra + `",namespace="` + ns + `"} 4`,
		`horizontalrunnerautoscaler_status_desired_replicas{`, `github_rate_limit{`, `github_rate_limit_remaining{`,
		`arcflow_github_calls_total{`, `arcflow_kubernetes_requests_total{`, `temporal_workflow_task_execution_latency_seconds_bucket{`,
	} {
		require.Contains(t, workerMetrics, name)
	}
	webhookMetrics := scrape(t, w.WebhookMetricsURL)
	for _, name := range []string{
		// queued, in_progress (which runner took the job) and completed
		`arcflow_webhook_deliveries_total{event="workflow_job",result="accepted"} ` + fmt.Sprint(3*Jobs),
		`arcflow_job_startup_duration_seconds_count ` + fmt.Sprint(Jobs), `temporal_request{`,
	} {
		require.Contains(t, webhookMetrics, name)
	}
	return result
}

func scrape(t *testing.T, url string) string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// RunnerPods names the runner pods in the world's namespace now.
func RunnerPods(t *testing.T, w *world.World) []string {
	var names []string
	for _, p := range runnerPodList(t, w) {
		names = append(names, p.Name)
	}
	return names
}

func runnerPodList(t *testing.T, w *world.World) []corev1.Pod {
	list, err := w.Kube.CoreV1().Pods(w.Namespace()).List(context.Background(), metav1.ListOptions{LabelSelector: activities.LabelRunner})
	require.NoError(t, err)
	return list.Items
}

// activePods counts the runner pods that can run a job, as Kubernetes counts a
// ReplicaSet's active pods: not Succeeded or Failed, not being deleted. A
// finished ephemeral runner's pod stays until its runner deletes it, while the
// pool may already have replaced it.
func activePods(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func logProcess(t *testing.T, p *world.Process) {
	if p == nil {
		return
	}
	data, _ := os.ReadFile(p.LogPath())
	t.Logf("%s log:\n%s", p.Name, fmt.Sprint(string(data)))
}
