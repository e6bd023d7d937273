package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/deploy/monitoring"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// Every metric that the alert rules (deploy/monitoring/arcflow-alerts.yaml) and
// the Grafana dashboard query is one that a running worker or webhook exports,
// the Temporal SDK's included, once they have done some work: two jobs, a pool
// whose runners crash, a delivery with a bad signature. A metric renamed in the
// code, or a typo in a query, fails here instead of leaving an empty panel or an
// alert that can never fire. The label values the alerts select are checked too.
func TestAlertsAndDashboardQueryExportedMetrics(t *testing.T) {
	parallel(t)
	const ns = "monitoring"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	require.NoError(t, w.Apply(ctx, fullpath.RunnerDeployment))
	require.NoError(t, w.Apply(ctx, world.CrashingRunners("broken", "octo-org/app", true)))
	require.NoError(t, w.Apply(ctx, idleRunnerSet)) // for runnerset_spec_replicas
	t.Cleanup(func() {                              // before the world stops: its worker ends the pool
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "runnerset", "idle", "--wait=false")
	})
	queueJobs(t, ctx, w, 2)
	waitJobsDone(t, w, 2, 90*time.Second)

	// A delivery with a wrong signature: 401, counted as bad_signature.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.WebhookURL, strings.NewReader(`{"action":"queued"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "workflow_job")
	req.Header.Set("X-Hub-Signature-256", "sha256=0000")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// The crashing pool's failures reach the leader's metrics.
	var worker, webhook map[string][]map[string]string
	exported := map[string]bool{} // family names
	require.Eventually(t, func() bool {
		worker, webhook = scrapeSeries(t, ctx, w.WorkerMetricsURL, exported), scrapeSeries(t, ctx, w.WebhookMetricsURL, exported)
		return hasSeries(worker, "arcflow_runner_failures_total", map[string]string{"name": "broken", "reason": "pod-failed"}) &&
			hasSeries(worker, "runnerset_spec_replicas", map[string]string{"runnerset": "idle"})
	}, 60*time.Second, 500*time.Millisecond, "arcflow_runner_failures_total for the crashing pool, runnerset_spec_replicas")

	queries, err := monitoring.Queries()
	require.NoError(t, err)
	used := map[string]bool{}
	for _, q := range queries {
		names := monitoring.MetricNames(q.Expr)
		require.NotEmpty(t, names, "%s: %s", q.Source, q.Expr)
		for _, name := range names {
			if name == "up" { // Prometheus's own, per target
				continue
			}
			if strings.HasPrefix(name, "arcflow_gha_") {
				// A scale set's, which this world has none of: the activities'
				// tests hold these queries against what they export, and
				// TestAScaleSetsJobsRunWithNoWebhook scrapes them.
				continue
			}
			family := monitoring.Family(name, exported)
			require.True(t, exported[family], "%s queries %s, which neither the worker nor the webhook exports", q.Source, name)
			if family != name {
				require.Contains(t, []string{family + "_bucket", family + "_count", family + "_sum"}, name, "%s: %s", q.Source, name)
			}
			used[family] = true
		}
	}
	t.Logf("%d queries use %d exported metrics", len(queries), len(used))

	// The label values the alerts select.
	for _, c := range []struct {
		series map[string][]map[string]string
		name   string
		labels map[string]string
	}{
		// ArcflowWorkerNoLeader: the leader renews its Lease.
		{worker, "arcflow_kubernetes_requests_total", map[string]string{"resource": "leases", "verb": "update", "code": "200"}},
		{webhook, "arcflow_webhook_deliveries_total", map[string]string{"event": "workflow_job", "result": "accepted"}},
		{webhook, "arcflow_webhook_deliveries_total", map[string]string{"event": "workflow_job", "result": "bad_signature"}},
		{worker, "arcflow_runner_failures_total", map[string]string{"kind": "RunnerDeployment", "namespace": ns, "name": "broken", "reason": "pod-failed"}},
		{worker, "github_rate_limit_remaining", nil},
		{worker, "temporal_workflow_task_schedule_to_start_latency_seconds_bucket", map[string]string{"le": "+Inf"}},
		{worker, "temporal_activity_schedule_to_start_latency_seconds_bucket", map[string]string{"le": "+Inf"}},
		{webhook, "arcflow_job_startup_duration_seconds_bucket", map[string]string{"le": "+Inf"}},
	} {
		require.True(t, hasSeries(c.series, c.name, c.labels), "%s%v", c.name, c.labels)
	}
}

// idleRunnerSet is a RunnerSet of no runners.
const idleRunnerSet = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerSet
metadata:
  name: idle
spec:
  replicas: 0
  organization: octo-org
  labels: [linux, idle]
  selector:
    matchLabels:
      app: idle
  serviceName: idle
  template:
    metadata:
      labels:
        app: idle
    spec:
      containers:
      - name: runner
        image: summerwind/actions-runner:latest
`

// scrapeSeries reads /metrics and returns each family's label sets, and a
// histogram's also under its _count, _sum and (only le="+Inf") _bucket names; it
// adds the family names to families.
func scrapeSeries(t *testing.T, ctx context.Context, url string, families map[string]bool) map[string][]map[string]string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string][]map[string]string{}
	for name, f := range parsed {
		families[name] = true
		out[name] = nil
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[name] = append(out[name], labels)
			if m.GetHistogram() != nil {
				inf := map[string]string{"le": "+Inf"} // the bucket every histogram has
				for k, v := range labels {
					inf[k] = v
				}
				out[name+"_bucket"] = append(out[name+"_bucket"], inf)
				out[name+"_count"] = append(out[name+"_count"], labels)
				out[name+"_sum"] = append(out[name+"_sum"], labels)
			}
		}
	}
	return out
}

// hasSeries: a sample of name has all of the labels.
func hasSeries(series map[string][]map[string]string, name string, labels map[string]string) bool {
	for _, s := range series[name] {
		match := true
		for k, v := range labels {
			match = match && s[k] == v
		}
		if match {
			return true
		}
	}
	return false
}
