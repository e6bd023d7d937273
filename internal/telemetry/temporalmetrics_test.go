package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

func TestTemporalMetricsKeepOneLabelSetPerName(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewTemporalMetrics(reg)
	queue := h.WithTags(map[string]string{"namespace": "default", "task_queue": "arcflow"})
	queue.Counter("temporal_request").Inc(2)
	// The same name with another tag set, and a tag outside the label set.
	queue.WithTags(map[string]string{"operation": "PollWorkflowTaskQueue", "client_name": "x"}).Counter("temporal_request").Inc(1)
	queue.Timer("temporal_activity_execution_latency").Record(150 * time.Millisecond)
	queue.Gauge("temporal_sticky_cache_size").Update(7)

	expected := `
# HELP temporal_request Temporal SDK counter temporal_request.
# TYPE temporal_request counter
temporal_request{activity_type="",namespace="default",operation="",poller_type="",task_queue="arcflow",worker_type="",workflow_type=""} 2
temporal_request{activity_type="",namespace="default",operation="PollWorkflowTaskQueue",poller_type="",task_queue="arcflow",worker_type="",workflow_type=""} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected), "temporal_request"))
	require.Equal(t, 4, testutil.CollectAndCount(reg, "temporal_request", "temporal_activity_execution_latency_seconds", "temporal_sticky_cache_size"))
}
