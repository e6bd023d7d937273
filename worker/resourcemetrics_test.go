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
