package activities

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/deploy/monitoring"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
)

var jobMetricsPoll = calls.PollScaleSetInput{
	Set: calls.ScaleSetRef{Scope: github.Scope{Organization: "octo-org"}}, Name: "arc", Namespace: "ci", MaxCapacity: 3,
}

// jobMessages: a job started 30 s after its set was assigned it and ended a
// minute later; a withdrawn job (no runner assigned); an assignment.
func jobMessages() *scaleset.Message {
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	stamp := func(d time.Duration) string { return at.Add(d).Format(time.RFC3339Nano) }
	base := scaleset.JobMessage{OwnerName: "octo-org", RepositoryName: "app", EventName: "push", JobDisplayName: "build (linux, 1.24)",
		QueueTime: stamp(-time.Minute), ScaleSetAssignTime: stamp(0)}
	started, completed, withdrawn, assigned := base, base, base, base
	started.MessageType, started.RunnerAssignTime = scaleset.JobStarted, stamp(30*time.Second)
	completed.MessageType, completed.RunnerAssignTime, completed.FinishTime, completed.Result = scaleset.JobCompleted, stamp(30*time.Second), stamp(90*time.Second), "succeeded"
	withdrawn.MessageType, withdrawn.Result = scaleset.JobCompleted, "canceled"
	assigned.MessageType = scaleset.JobAssigned
	return &scaleset.Message{ID: 7, Type: scaleset.JobMessagesType, Jobs: []scaleset.JobMessage{assigned, started, completed, withdrawn}}
}

// Starts and ends are counted as ARC's listener counts them: the startup from
// the set's assignment to the runner's, the execution from the runner's
// assignment to the finish; a withdrawn job is no completion. No job_name.
func TestAMessagesJobsAreCountedAsARCCountsThem(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewScaleSetMetrics(reg)
	m.received(jobMetricsPoll, jobMessages())

	labels := []string{"arc", "ci", "", "octo-org", "app", "push"}
	require.Equal(t, 1.0, testutil.ToFloat64(m.started.WithLabelValues(labels...)))
	require.Equal(t, 1.0, testutil.ToFloat64(m.completed.WithLabelValues(append(labels, "succeeded")...)))
	n, err := testutil.GatherAndCount(reg, "arcflow_gha_completed_jobs_total")
	require.NoError(t, err)
	require.Equal(t, 1, n, "the withdrawn job is not counted")
	startup := histogramOf(t, reg, "arcflow_gha_job_startup_duration_seconds")
	require.Equal(t, uint64(1), startup.GetSampleCount())
	require.InDelta(t, 30, startup.GetSampleSum(), 0.001)
	require.Len(t, startup.GetBucket(), 45, "ARC's buckets")
	execution := histogramOf(t, reg, "arcflow_gha_job_execution_duration_seconds")
	require.Equal(t, uint64(1), execution.GetSampleCount())
	require.InDelta(t, 60, execution.GetSampleSum(), 0.001)

	// Without the set's assignment time, the startup counts from the queue.
	msg := jobMessages()
	msg.Jobs[1].ScaleSetAssignTime = ""
	m.received(jobMetricsPoll, msg)
	startup = histogramOf(t, reg, "arcflow_gha_job_startup_duration_seconds")
	require.Equal(t, uint64(2), startup.GetSampleCount())
	require.InDelta(t, 30+90, startup.GetSampleSum(), 0.001)
}

func histogramOf(t *testing.T, reg *prometheus.Registry, name string) *dto.Histogram {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			require.Len(t, f.GetMetric(), 1, name)
			return f.GetMetric()[0].GetHistogram()
		}
	}
	t.Fatalf("no %s", name)
	return nil
}

// Two polls of one set on a worker (the old one not yet ended after the
// workflow gave up on it): the old one's end leaves the new one's series.
func TestAnOlderPollsEndLeavesTheNewerPollsGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewScaleSetMetrics(reg)
	old := m.polling(jobMetricsPoll)
	newer := m.polling(jobMetricsPoll)
	old()
	n, err := testutil.GatherAndCount(reg, "arcflow_gha_max_runners")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	newer()
	n, err = testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Zero(t, n)

	var none *ScaleSetMetrics // a worker without metrics
	none.polling(jobMetricsPoll)()
	none.received(jobMetricsPoll, jobMessages())
}

func TestDesiredRunnersIsMinPlusAssignedWithinMax(t *testing.T) {
	require.Equal(t, 3, desiredRunners(1, 5, 2))
	require.Equal(t, 5, desiredRunners(1, 5, 9))
	require.Equal(t, 0, desiredRunners(0, 0, 4), "maxReplicas 0: none")
}

// Every arcflow_gha_ metric the alert rules and the dashboard query is one
// these metrics export. The e2e monitoring test leaves them out: they exist
// only while a set is polled, or once its jobs ran.
func TestTheAlertsAndDashboardQueryScaleSetMetricsThatExist(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewScaleSetMetrics(reg)
	m.received(jobMetricsPoll, jobMessages())
	defer m.polling(jobMetricsPoll)()
	families, err := reg.Gather()
	require.NoError(t, err)
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	require.Len(t, exported, 12)
	queries, err := monitoring.Queries()
	require.NoError(t, err)
	used := 0
	for _, q := range queries {
		for _, name := range monitoring.MetricNames(q.Expr) {
			if strings.HasPrefix(name, "arcflow_gha_") {
				used++
				require.True(t, exported[monitoring.Family(name, exported)], "%s queries %s", q.Source, name)
			}
		}
	}
	require.NotZero(t, used, "the alerts or the dashboard query the scale set metrics")
}
