package e2e

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/internal/simworld"
	"github.com/arcflow/arcflow/sim"
)

// The whole path, as in production: GitHub queues jobs and sends signed
// workflow_job webhooks; `arcflow webhook` signals the autoscaler; `arcflow worker`
// scales the pool; simulated runners register, take the jobs, finish them and
// exit; after the scale-down delay nothing is left.

const fullPathRunnerDeployment = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
spec:
  template:
    spec:
      repository: octo-org/app
      labels: [linux, build]
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
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

const fullPathRunnerSet = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerSet
metadata:
  name: builders
spec:
  organization: octo-org
  labels: [linux, build]
  selector:
    matchLabels:
      app: builders
  serviceName: builders
  template:
    metadata:
      labels:
        app: builders
    spec:
      containers:
      - name: runner
        image: summerwind/actions-runner:latest
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: builders
spec:
  scaleTargetRef:
    kind: RunnerSet
    name: builders
  minReplicas: 0
  maxReplicas: 4
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

func TestFullPathRunnerDeploymentFromWebhookToScaleDown(t *testing.T) {
	runFullPath(t, "full-rd", fullPathRunnerDeployment, "app")
}

func TestFullPathRunnerSetFromWebhookToScaleDown(t *testing.T) {
	runFullPath(t, "full-rs", fullPathRunnerSet, "builders")
}

func runFullPath(t *testing.T, ns, manifest, hra string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w, err := simworld.Start(ctx, simworld.Config{
		Stack: stack, RepoRoot: repoRoot(t), Namespace: ns, Dir: t.TempDir(), Binary: arcflowBinary(t),
		Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second,
		Seed: 1,
		Log:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("jobs: %+v", w.GitHub.Jobs())
			t.Logf("runners: %+v", w.GitHub.Runners())
			t.Logf("pods: %v", runnerPods(t, w))
			podsOut, _ := stack.Kubectl(context.Background(), "get", "pods,sts,secrets", "-n", ns, "-o", "wide")
			t.Logf("kubectl:\n%s", podsOut)
			out, _ := stack.Temporal(context.Background(), "workflow", "show", "--output", "json", "--workflow-id", "hra/"+ns+"/"+hra)
			_ = os.WriteFile("/tmp/hra-history.json", []byte(out), 0o644)
			pools, _ := stack.Temporal(context.Background(), "workflow", "list", "--query", "WorkflowType='PoolWorkflow'")
			t.Logf("pools: %s", pools)
			for _, kind := range []string{"runnerdeployment", "runnerset"} {
				out, _ := stack.Temporal(context.Background(), "workflow", "show", "--output", "json", "--workflow-id", "pool/"+ns+"/"+kind+"/"+hra)
				_ = os.WriteFile("/tmp/pool-history-"+kind+".json", []byte(out), 0o644)
			}
			t.Logf("autoscaler history:\n%s", out)
			logProcess(t, w.Worker)
			logProcess(t, w.Webhook)
		}
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "hra,rdeploy,runnerset", "--all", "--wait=false")
		require.Eventually(t, func() bool { return len(runnerPods(t, w)) == 0 && len(w.GitHub.Runners()) == 0 },
			90*time.Second, 200*time.Millisecond, "pools drained after delete")
		require.NoError(t, w.Stop())
	})
	require.NoError(t, w.Apply(ctx, manifest))
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(ctx, "get", "-n", ns, "hra", hra, "-o", `jsonpath={.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	}, 60*time.Second, 200*time.Millisecond, "the autoscaler is accepted")
	require.Eventually(t, func() bool {
		out, err := stack.Kubectl(ctx, "get", "-n", ns, "hra", hra, "-o", "jsonpath={.status.desiredReplicas}")
		return err == nil && out == "0" && len(runnerPods(t, w)) == 0
	}, 60*time.Second, 200*time.Millisecond, "the pool settles at minReplicas 0")

	const jobs = 6
	start := time.Now()
	require.NoError(t, sim.Workload{Jobs: jobs, Repositories: []string{"octo-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "build"}}}.
		Run(ctx, w.Queue))

	maxPods := 0
	require.Eventually(t, func() bool {
		maxPods = max(maxPods, len(runnerPods(t, w)))
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" {
				done++
			}
		}
		return done == jobs
	}, 40*time.Second, 100*time.Millisecond, "every job ran to completion")
	allDone := time.Since(start)
	require.Eventually(t, func() bool { return len(runnerPods(t, w)) == 0 && len(w.GitHub.Runners()) == 0 },
		90*time.Second, 200*time.Millisecond, "no runner pod and no registered runner after the scale-down delay")
	// The pool's own replicas (1 when a manifest leaves it out, as ARC's do)
	// created a runner before the autoscaler first spoke; only later pods are the
	// jobs' cost.
	forJobs := 0
	for _, p := range w.Runners.PodTimes() {
		if p.Created.After(start) {
			forJobs++
		}
	}
	t.Logf("%d jobs done in %v; scaled to zero %v later; %d runner pods created for them (%d in all); at most %d at once",
		jobs, allDone.Round(time.Millisecond), (time.Since(start) - allDone).Round(time.Millisecond), forJobs, len(w.Runners.PodTimes()), maxPods)

	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "job %d", j.ID)
	}
	require.Empty(t, w.Runners.Violations())
	require.LessOrEqual(t, maxPods, 4, "never above maxReplicas")
	require.LessOrEqual(t, forJobs, jobs, "one runner pod per job at most")
	stats := w.Sender.Stats()
	require.Zero(t, stats.Rejected+stats.Failed, "every delivery accepted")
	require.Equal(t, 3*jobs, stats.Accepted, "queued, in_progress and completed for each job")

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
		`arcflow_webhook_deliveries_total{event="workflow_job",result="accepted"} ` + fmt.Sprint(2*jobs),
		`arcflow_job_startup_duration_seconds_count ` + fmt.Sprint(jobs), `temporal_request{`,
	} {
		require.Contains(t, webhookMetrics, name)
	}
}

func scrape(t *testing.T, url string) string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

func runnerPods(t *testing.T, w *simworld.World) []string {
	list, err := w.Kube.CoreV1().Pods(w.Namespace()).List(context.Background(), metav1.ListOptions{LabelSelector: activities.LabelRunner})
	require.NoError(t, err)
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}

func logProcess(t *testing.T, p *simworld.Process) {
	if p == nil {
		return
	}
	data, _ := os.ReadFile(p.LogPath())
	t.Logf("%s log:\n%s", p.Name, fmt.Sprint(string(data)))
}
