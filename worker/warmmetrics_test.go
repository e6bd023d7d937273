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

func TestWarmRunnersAndIdleRunnerSecondsPerPool(t *testing.T) {
	pools := func(objs ...map[string]any) cache.GenericLister {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		for _, o := range objs {
			require.NoError(t, indexer.Add(&unstructured.Unstructured{Object: o}))
		}
		return cache.NewGenericLister(indexer, v1alpha1.RunnerDeploymentResource.GroupResource())
	}
	rds := pools(map[string]any{
		"metadata": map[string]any{"name": "auto", "namespace": "ci"},
		"status":   map[string]any{"warm": map[string]any{"runners": int64(4), "idleRunnerSeconds": int64(1234)}},
	}, map[string]any{"metadata": map[string]any{"name": "fixed", "namespace": "ci"}})
	rss := pools(map[string]any{
		"metadata": map[string]any{"name": "cache", "namespace": "ci"},
		"status":   map[string]any{"warm": map[string]any{"runners": int64(0), "idleRunnerSeconds": int64(7)}},
	})
	reg := prometheus.NewRegistry()
	m := NewResourceMetrics(reg)
	m.use(nil, rds, rss)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP arcflow_idle_runner_seconds_total Runner-seconds a pool's registered runners spent without a job, while its autoscaler keeps an auto buffer (status.warm.idleRunnerSeconds).
# TYPE arcflow_idle_runner_seconds_total counter
arcflow_idle_runner_seconds_total{kind="RunnerDeployment",name="auto",namespace="ci"} 1234
arcflow_idle_runner_seconds_total{kind="RunnerSet",name="cache",namespace="ci"} 7
# HELP arcflow_warm_runners Warm runners the autoscaler of a pool keeps on top of its jobs (arcflow.dev/idle-runners: auto; status.warm.runners).
# TYPE arcflow_warm_runners gauge
arcflow_warm_runners{kind="RunnerDeployment",name="auto",namespace="ci"} 4
arcflow_warm_runners{kind="RunnerSet",name="cache",namespace="ci"} 0
`), "arcflow_warm_runners", "arcflow_idle_runner_seconds_total"))
}
