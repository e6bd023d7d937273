package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/internal/telemetry"
)

// TestRepositoryDocs runs every check on this repository (make lint runs it).
// It builds cmd/arcflow for the commands' --help and runs the helm-docs of
// make tools; with -short and no helm-docs it skips.
func TestRepositoryDocs(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	helmDocs := filepath.Join(root, ".tools", "bin", "helm-docs")
	if _, err := os.Stat(helmDocs); err != nil {
		if testing.Short() {
			t.Skip("no helm-docs: run make tools")
		}
		t.Fatalf("no %s: run make tools", helmDocs)
	}

	bin := filepath.Join(t.TempDir(), "arcflow")
	build := exec.Command("go", "build", "-o", bin, "./cmd/arcflow")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	// Defaults come from the environment (TEMPORAL_ADDRESS, POD_NAMESPACE,
	// ...): document the ones an empty environment gives.
	env := []string{"PATH=" + os.Getenv("PATH")}
	usage := exec.Command(bin, "--help")
	usage.Env = env
	out, err = usage.CombinedOutput()
	require.NoError(t, err, string(out))
	repo := Repo{Root: root, Commands: ParseCommands(string(out)), Help: map[string]string{}, TemporalMetrics: temporalMetrics(t, root)}
	require.Subset(t, repo.Commands, []string{"worker", "webhook", "all", "setup", "status", "scale"}, string(out))
	for _, cmd := range repo.Commands {
		help := exec.Command(bin, cmd, "--help")
		help.Env = env
		out, _ := help.CombinedOutput() // --help exits 0, or 2 on older flag packages
		require.Contains(t, string(out), "-temporal-address", "arcflow %s --help", cmd)
		repo.Help[cmd] = string(out)
	}

	gen := exec.Command(helmDocs, "--chart-search-root", "deploy/helm", "--skip-version-footer", "--dry-run", "--log-level", "warning")
	gen.Dir = root
	generated, err := gen.Output()
	require.NoError(t, err)
	repo.HelmDocs = string(generated)

	problems, err := repo.Check()
	require.NoError(t, err)
	var lines []string
	for _, p := range problems {
		lines = append(lines, p.String())
	}
	require.Empty(t, problems, "documentation problems:\n%s", strings.Join(lines, "\n"))
}

// temporalMetrics runs every metric name of the Temporal SDK (its constants
// file, from the module cache) through arcflow's MetricsHandler as the SDK
// does (timers for the _latency names, counters for the rest), and reads back
// the families, with their labels, that the registry then exports.
func temporalMetrics(t *testing.T, root string) map[string]Metric {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "go.temporal.io/sdk")
	list.Dir = root
	dir, err := list.Output()
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "internal", "common", "metrics", "constants.go"))
	require.NoError(t, err)
	names, err := SDKMetricNames(string(src))
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	h := telemetry.NewTemporalMetrics(reg)
	for _, name := range names {
		if SDKTimer(name) {
			h.Timer(name).Record(time.Millisecond)
		} else {
			h.Counter(name).Inc(1)
		}
	}
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]Metric{}
	for _, f := range families {
		m := Metric{Histogram: f.GetType() == dto.MetricType_HISTOGRAM}
		for _, l := range f.GetMetric()[0].GetLabel() {
			m.Labels = append(m.Labels, l.GetName())
		}
		out[f.GetName()] = m
	}
	return out
}

// The Temporal SDK's timers reach Prometheus in seconds, with the handler's
// fixed labels: the docs must name them so.
func TestTemporalMetricsAsExported(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	metrics := temporalMetrics(t, root)
	require.NotContains(t, metrics, "temporal_workflow_task_schedule_to_start_latency")
	wait := metrics["temporal_workflow_task_schedule_to_start_latency_seconds"]
	require.True(t, wait.Histogram)
	require.Contains(t, wait.Labels, "task_queue")
	require.Contains(t, metrics, "temporal_worker_task_slots_used")

	doc := Parse("docs/x.md", "`temporal_workflow_task_schedule_to_start_latency` climbs\n"+
		"temporal_workflow_task_schedule_to_start_latency_seconds_bucket{job=\"w\",task_queue=\"arcflow\",le=\"+Inf\"}")
	require.Equal(t, []string{
		"docs/x.md:1: temporal_workflow_task_schedule_to_start_latency: no such metric (the code exports temporal_workflow_task_schedule_to_start_latency_seconds)",
	}, msgs(CheckMetrics(doc, metrics, nil)))
}
