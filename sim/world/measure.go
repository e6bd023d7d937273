package world

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Percentiles are the p50, p95 and p99 of a sample (nearest rank).
type Percentiles struct {
	N             int
	P50, P95, P99 time.Duration
	Max           time.Duration
}

// PercentilesOf sorts a copy of d and reads its percentiles.
func PercentilesOf(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(float64(len(s))*p+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Percentiles{N: len(s), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1]}
}

func (p Percentiles) String() string {
	if p.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%s / %s / %s", round(p.P50), round(p.P95), round(p.P99))
}

func round(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

// scrape reads a process's /metrics with Prometheus's own text parser.
func scrape(ctx context.Context, metricsURL string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", metricsURL, err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", metricsURL, err)
	}
	return families, nil
}

func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// KubernetesWrites reads a worker's /metrics and sums its create, update, patch and
// delete requests, by resource.
func KubernetesWrites(ctx context.Context, metricsURL string) (map[string]float64, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["arcflow_kubernetes_requests_total"].GetMetric() {
		labels := labelsOf(m)
		switch labels["verb"] {
		case "create", "update", "patch", "delete":
			out[labels["verb"]+" "+labels["resource"]] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// RunnerListReads reads a worker's /metrics: its reads of a scope's runner
// list that called GitHub, by what waited on them
// (arcflow_github_runner_list_reads_total).
func RunnerListReads(ctx context.Context, metricsURL string) (map[string]float64, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["arcflow_github_runner_list_reads_total"].GetMetric() {
		out[labelsOf(m)["purpose"]] += m.GetCounter().GetValue()
	}
	return out, nil
}

// WebhookSignals counts what a webhook server sent to Temporal: its autoscaler
// signals, and the workflow_job deliveries answered after a signal: 2xx, or 503
// when the signal failed.
type WebhookSignals struct {
	Signals, Deliveries float64
}

// Minus is the difference since an earlier reading.
func (w WebhookSignals) Minus(base WebhookSignals) WebhookSignals {
	return WebhookSignals{Signals: w.Signals - base.Signals, Deliveries: w.Deliveries - base.Deliveries}
}

// PerDelivery is signals per delivery: 1 without group commit, less with it.
func (w WebhookSignals) PerDelivery() string {
	if w.Deliveries == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f (%.0f signals for %.0f deliveries)", w.Signals/w.Deliveries, w.Signals, w.Deliveries)
}

// WebhookSignalCounts reads a webhook server's /metrics.
func WebhookSignalCounts(ctx context.Context, metricsURL string) (WebhookSignals, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return WebhookSignals{}, err
	}
	var out WebhookSignals
	for _, m := range families["arcflow_webhook_signals_total"].GetMetric() {
		out.Signals += m.GetCounter().GetValue()
	}
	for _, m := range families["arcflow_webhook_deliveries_total"].GetMetric() {
		labels := labelsOf(m)
		switch labels["result"] {
		case "accepted", "temporal_unavailable":
			if labels["event"] == "workflow_job" {
				out.Deliveries += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

// HistoryStats are the history lengths of a set of workflow executions.
type HistoryStats struct {
	Executions int
	Mean       float64
	Max        int64
	// LongestID and LongestRunID name the execution with Max events.
	LongestID, LongestRunID string
}

// RunnerHistories measures the history of every runner workflow of a namespace.
func RunnerHistories(ctx context.Context, tc client.Client, namespace string) (HistoryStats, error) {
	return Histories(ctx, tc, "RunnerWorkflow", "runner/"+namespace+"/")
}

// Histories measures the history of every execution of a workflow type whose
// ID starts with prefix, each run of a continue-as-new chain on its own. It
// describes each execution: the visibility listing's history length lags
// behind for workflows that just closed.
func Histories(ctx context.Context, tc client.Client, workflowType, prefix string) (HistoryStats, error) {
	var stats HistoryStats
	var total int64
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = '%s' AND WorkflowId STARTS_WITH '%s'", workflowType, prefix),
			NextPageToken: token,
		})
		if err != nil {
			return stats, fmt.Errorf("list %s executions: %w", workflowType, err)
		}
		for _, e := range resp.GetExecutions() {
			d, err := tc.DescribeWorkflowExecution(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
			if err != nil {
				return stats, fmt.Errorf("describe %s: %w", e.GetExecution().GetWorkflowId(), err)
			}
			length := d.GetWorkflowExecutionInfo().GetHistoryLength()
			stats.Executions++
			total += length
			if length > stats.Max {
				stats.Max = length
				stats.LongestID, stats.LongestRunID = e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if stats.Executions > 0 {
		stats.Mean = float64(total) / float64(stats.Executions)
	}
	return stats, nil
}

// ActivityExecutions reads a worker's /metrics: how many activity executions the
// Temporal SDK finished in that process, by activity type.
func ActivityExecutions(ctx context.Context, metricsURL string) (map[string]uint64, error) {
	families, err := scrape(ctx, metricsURL)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, m := range families["temporal_activity_execution_latency_seconds"].GetMetric() {
		out[labelsOf(m)["activity_type"]] += m.GetHistogram().GetSampleCount()
	}
	return out, nil
}

// CountRunning counts the running workflows whose ID starts with prefix, from
// Temporal's visibility store.
func CountRunning(ctx context.Context, tc client.Client, prefix string) (int64, error) {
	return CountWorkflows(ctx, tc, fmt.Sprintf("ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH '%s'", prefix))
}

// HistoryEventTypes lists the event types of one execution's history in order,
// one per line: what a runner pays for, to read beside the count.
func HistoryEventTypes(ctx context.Context, tc client.Client, workflowID, runID string) (string, error) {
	var b strings.Builder
	iter := tc.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			return "", fmt.Errorf("history of %s: %w", workflowID, err)
		}
		fmt.Fprintf(&b, "%3d %s%s\n", e.GetEventId(), strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"), eventDetail(e))
	}
	return b.String(), nil
}

// eventDetail names what an event is about where its type alone does not: the
// activity of a scheduled task, the cause of a failed workflow task, a signal.
func eventDetail(e *historypb.HistoryEvent) string {
	switch {
	case e.GetActivityTaskScheduledEventAttributes() != nil:
		return " " + e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
	case e.GetWorkflowTaskFailedEventAttributes() != nil:
		a := e.GetWorkflowTaskFailedEventAttributes()
		return fmt.Sprintf(" %s: %.200s", a.GetCause(), a.GetFailure().GetMessage())
	case e.GetWorkflowExecutionSignaledEventAttributes() != nil:
		return " " + e.GetWorkflowExecutionSignaledEventAttributes().GetSignalName()
	case e.GetMarkerRecordedEventAttributes() != nil:
		a := e.GetMarkerRecordedEventAttributes()
		detail := " " + a.GetMarkerName()
		for _, p := range a.GetDetails()["data"].GetPayloads() {
			detail += fmt.Sprintf(" %.120s", p.GetData())
		}
		return detail
	}
	return ""
}

// CountWorkflows counts the workflows a visibility query matches.
func CountWorkflows(ctx context.Context, tc client.Client, query string) (int64, error) {
	resp, err := tc.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
	if err != nil {
		return 0, fmt.Errorf("count workflows (%s): %w", query, err)
	}
	return resp.GetCount(), nil
}
