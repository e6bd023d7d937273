package worker

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func TestRunnerFailuresAreACounterPerReason(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	require.NoError(t, indexer.Add(&unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "broken", "namespace": "ci"},
		"spec":     map[string]any{"replicas": int64(1)},
		"status":   map[string]any{"runnerFailures": map[string]any{"podFailed": int64(3), "registrationTimeout": int64(1)}},
	}}))
	require.NoError(t, indexer.Add(&unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "fine", "namespace": "ci"}, "spec": map[string]any{"replicas": int64(2)},
	}}))
	reg := prometheus.NewRegistry()
	m := NewResourceMetrics(reg)
	m.use(nil, cache.NewGenericLister(indexer, v1alpha1.RunnerDeploymentResource.GroupResource()), nil)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP arcflow_runner_failures_total Runners of a pool that could not start, by reason (status.runnerFailures).
# TYPE arcflow_runner_failures_total counter
arcflow_runner_failures_total{kind="RunnerDeployment",name="broken",namespace="ci",reason="pod-failed"} 3
arcflow_runner_failures_total{kind="RunnerDeployment",name="broken",namespace="ci",reason="registration-timeout"} 1
`), "arcflow_runner_failures_total"))
}

// Every condition of every kind is a series, True ones included; a condition
// without a type or status, or a type listed twice, makes none (the same
// series twice would fail the scrape).
func TestResourceConditionsAreSeries(t *testing.T) {
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}
	}
	lister := func(objs ...map[string]any) cache.GenericLister {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		for _, o := range objs {
			require.NoError(t, indexer.Add(&unstructured.Unstructured{Object: o}))
		}
		return cache.NewGenericLister(indexer, v1alpha1.RunnerDeploymentResource.GroupResource())
	}
	hras := lister(map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "ci"},
		"status":   map[string]any{"conditions": []any{cond("Accepted", "Unknown", "TemporalUnavailable"), cond("GitHubBudget", "True", "WithinBudget")}},
	})
	rds := lister(map[string]any{
		"metadata": map[string]any{"name": "app", "namespace": "ci"},
		"status": map[string]any{"conditions": []any{
			cond("Accepted", "False", "InvalidSpec"), cond("Accepted", "True", "Accepted"), // the first one counts
			cond("UnsupportedFields", "True", "Ignored"), map[string]any{"type": "Broken"}, "not a condition",
		}},
	}, map[string]any{"metadata": map[string]any{"name": "new", "namespace": "ci"}}) // no status yet
	rss := lister(map[string]any{
		"metadata": map[string]any{"name": "disk", "namespace": "build"},
		"status":   map[string]any{"conditions": []any{cond("Accepted", "True", "Accepted")}},
	})
	reg := prometheus.NewRegistry()
	m := NewResourceMetrics(reg)
	m.use(hras, rds, rss)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP arcflow_resource_condition A status condition of a RunnerDeployment, RunnerSet or HorizontalRunnerAutoscaler: 1, with its type, status and reason.
# TYPE arcflow_resource_condition gauge
arcflow_resource_condition{kind="HorizontalRunnerAutoscaler",name="web",namespace="ci",reason="TemporalUnavailable",status="Unknown",type="Accepted"} 1
arcflow_resource_condition{kind="HorizontalRunnerAutoscaler",name="web",namespace="ci",reason="WithinBudget",status="True",type="GitHubBudget"} 1
arcflow_resource_condition{kind="RunnerDeployment",name="app",namespace="ci",reason="Ignored",status="True",type="UnsupportedFields"} 1
arcflow_resource_condition{kind="RunnerDeployment",name="app",namespace="ci",reason="InvalidSpec",status="False",type="Accepted"} 1
arcflow_resource_condition{kind="RunnerSet",name="disk",namespace="build",reason="Accepted",status="True",type="Accepted"} 1
`), "arcflow_resource_condition"))

	m.use(nil, nil, nil) // no longer leading: nothing
	n, err := testutil.GatherAndCount(reg, "arcflow_resource_condition")
	require.NoError(t, err)
	require.Zero(t, n)
}
