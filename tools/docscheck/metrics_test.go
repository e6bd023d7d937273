package docscheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const registrations = `package x

var fixed = []string{"namespace", "task_queue"}

func newMetrics() {
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arcflow_github_calls_total", Help: "GitHub calls.",
	}, []string{"credential", "endpoint", "status"})
	wait := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "arcflow_webhook_signal_seconds"})
	sdk := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "temporal_gauge"}, fixed)
	built := prometheus.NewCounterVec(prometheus.CounterOpts{Name: n}, fixed) // a name built at run time
}

var warm = prometheus.NewDesc("arcflow_warm_runners", "Warm runners.", []string{"kind", "name", "namespace"}, nil)
`

func TestCodeMetrics(t *testing.T) {
	metrics, err := CodeMetrics(map[string]string{"x/metrics.go": registrations})
	require.NoError(t, err)
	require.Equal(t, map[string]Metric{
		"arcflow_github_calls_total":     {Labels: []string{"credential", "endpoint", "status"}},
		"arcflow_webhook_signal_seconds": {Histogram: true},
		"temporal_gauge":                 {Labels: []string{"namespace", "task_queue"}},
		"arcflow_warm_runners":           {Labels: []string{"kind", "name", "namespace"}},
	}, metrics)
}

func TestSDKMetricNames(t *testing.T) {
	names, err := SDKMetricNames(`package metrics
const (
	TemporalMetricsPrefix = "temporal_"
	WorkflowTaskScheduleToStartLatency = TemporalMetricsPrefix + "workflow_task_schedule_to_start_latency"
	TemporalRequest = TemporalMetricsPrefix + "request"
	TemporalRequestFailure = TemporalRequest + "_failure"
)
const NamespaceTagName = "namespace"
`)
	require.NoError(t, err)
	require.Equal(t, []string{"temporal_request", "temporal_request_failure", "temporal_workflow_task_schedule_to_start_latency"}, names)
	require.True(t, SDKTimer(names[2]))
	require.False(t, SDKTimer(names[1]))
}

func TestCheckMetrics(t *testing.T) {
	known := map[string]Metric{
		"arcflow_github_calls_total":                          {Labels: []string{"credential", "endpoint", "status"}},
		"arcflow_webhook_signal_seconds":                      {Histogram: true},
		"arcflow_warm_runners":                                {Labels: []string{"kind", "name", "namespace"}},
		"github_rate_limit":                                   {Labels: []string{"credential"}},
		"temporal_activity_schedule_to_start_latency_seconds": {Histogram: true, Labels: []string{"namespace", "task_queue"}},
	}
	doc := Parse("docs/x.md", strings.Join([]string{
		"`arcflow_github_calls_total{credential,endpoint,status}` by `credential` and `arcflow_*`, `temporal_*`",
		"`arcflow_github_calls_total{endpoint,status,token}`",
		"answered `temporal_unavailable`; `arcflow_webhook_signal_seconds_bucket` and `_sum`",
		"the old `arcflow_github_requests_total`",
		"```text",
		`arcflow_warm_runners{job="arcflow-worker",namespace="arcflow-system",exported_namespace="ci",kind="RunnerSet",name="app"} 2`,
		`arcflow_warm_runners{job="arcflow-worker",le="+Inf",exported_job="x"} 2`,
		`rate(arcflow_webhook_signal_seconds_count[5m]) / arcflow_warm_runners_bucket{result=~"temporal_unavailable|cancelled"}`,
		`temporal_activity_schedule_to_start_latency_seconds_bucket{task_queue="arcflow",le="1.024"} and temporal_activity_schedule_to_start_latency`,
		`github_rate_limit{credential="app-1",reason="x"}`,
		"```",
	}, "\n"))
	require.Equal(t, []string{
		"docs/x.md:2: arcflow_github_calls_total{token}: arcflow_github_calls_total has no label token (its labels: credential, endpoint, status)",
		"docs/x.md:4: arcflow_github_requests_total: no such metric",
		"docs/x.md:7: arcflow_warm_runners{le}: arcflow_warm_runners has no label le (its labels: kind, name, namespace)",
		"docs/x.md:7: arcflow_warm_runners{exported_job}: arcflow_warm_runners has no label exported_job (its labels: kind, name, namespace)",
		"docs/x.md:8: arcflow_warm_runners_bucket: no such metric",
		"docs/x.md:9: temporal_activity_schedule_to_start_latency: no such metric (the code exports temporal_activity_schedule_to_start_latency_seconds)",
		"docs/x.md:10: github_rate_limit{reason}: github_rate_limit has no label reason (its labels: credential)",
	}, msgs(CheckMetrics(doc, known, map[string]bool{"temporal_unavailable": true})))
}

func TestCheckKubeNames(t *testing.T) {
	known := map[string]int{"arcflow.dev/pool": 1, "arcflow.dev/pool-token": 1, "arcflow.dev/token-expires-at": 1}
	doc := Parse("docs/x.md", strings.Join([]string{
		"Pods carry `arcflow.dev/pool=<name>`, the Secret `arcflow.dev/pool-token=true`; annotations under arcflow.dev/ are ours.",
		"`arcflow.dev/pool-tokens` and arcflow.dev/idle-runner",
		"```sh",
		"kubectl get secret -l arcflow.dev/token=true",
		"```",
	}, "\n"))
	require.Equal(t, []string{
		"docs/x.md:2: arcflow.dev/pool-tokens: the code has no such label or annotation",
		"docs/x.md:2: arcflow.dev/idle-runner: the code has no such label or annotation",
		"docs/x.md:4: arcflow.dev/token: the code has no such label or annotation",
	}, msgs(CheckKubeNames(doc, known)))

	config := Parse("docs/configuration.md", "| `arcflow.dev/pool-token` | Secrets |")
	require.Equal(t, []string{
		"docs/configuration.md: label or annotation arcflow.dev/pool is not documented",
		"docs/configuration.md: label or annotation arcflow.dev/token-expires-at is not documented",
	}, msgs(CheckKubeNamesDocumented(config, known)))
}

func TestPrinterColumns(t *testing.T) {
	cols := PrinterColumns(map[string]string{"api/hra_types.go": `
// +kubebuilder:printcolumn:JSONPath=".status.desiredReplicas",name=Desired,type=number
// +kubebuilder:printcolumn:JSONPath=".status.warm.runners",name=Warm,type=number
// +kubebuilder:printcolumn:JSONPath=".metadata.creationTimestamp",name=Age,type=date
`, "api/rs_types.go": `// +kubebuilder:printcolumn:JSONPath=".status.volumesFree",name=Volumes-Free,type=number`})
	require.Equal(t, []string{"DESIRED", "VOLUMES-FREE", "WARM"}, cols)
	doc := Parse("docs/configuration.md", "`kubectl get hra` shows `DESIRED`; a RunnerSet `VOLUMES-FREE`; WARM in prose is not enough")
	require.Equal(t, []string{
		"docs/configuration.md: printer column WARM is not documented (as `WARM`)",
	}, msgs(CheckPrinterColumns(doc, cols)))
}

func TestCheckMetricTable(t *testing.T) {
	known := map[string]Metric{
		"arcflow_github_calls_total":     {Labels: []string{"credential", "endpoint", "status"}},
		"arcflow_webhook_signal_seconds": {Histogram: true},
		"arcflow_warm_runners":           {Labels: []string{"kind", "name", "namespace"}},
		"github_rate_limit":              {Labels: []string{"credential"}},
	}
	doc := Parse("docs/operations.md", strings.Join([]string{
		"| Metric | From | Meaning |",
		"|---|---|---|",
		"| `github_rate_limit` | worker | ARC's |",
		"| `arcflow_github_calls_total{endpoint,status}` | worker | calls |",
		"| `arcflow_webhook_signal_seconds` | webhook | signal latency |",
		"",
		"`arcflow_warm_runners` in prose is no row.",
	}, "\n"))
	require.Equal(t, []string{
		"docs/operations.md:4: arcflow_github_calls_total{endpoint,status}: the row lists labels but not credential",
		"docs/operations.md: metric arcflow_warm_runners has no row in the metrics table",
	}, msgs(CheckMetricTable(doc, known)))
}

func TestCheckFlagMentions(t *testing.T) {
	known := map[string]bool{"reconcile-period": true, "n": true, "kube-api-qps": true, "kube-api-burst": true, "keep-stepping": true}
	doc := Parse("docs/x.md", strings.Join([]string{
		"within `--reconcile-period` (`-n ci`); `--kube-api-qps 100 --kube-api-burst 300`, `--keep-stepping`",
		"`--reconcile-interval` and `--kube-api-qps=50 --kube-qps 5`; `kubectl apply --server-side` is not a flag span",
		"`-x` and `--server-side` and `-tags profiling`",
		"`--alone`",
		"```sh",
		"arcflow worker `--nope`",
		"```",
	}, "\n"))
	require.Equal(t, []string{
		"docs/x.md:2: --reconcile-interval: no arcflow command or benchmark has this flag",
		"docs/x.md:2: --kube-qps: no arcflow command or benchmark has this flag",
		"docs/x.md:3: -x: no arcflow command or benchmark has this flag",
		"docs/x.md:4: --alone: no arcflow command or benchmark has this flag",
	}, msgs(CheckFlagMentions(doc, known)))
}
