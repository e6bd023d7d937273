package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// scaleSnap is every cumulative counter a scale step reads at the start and
// the end of its measured window; a row is the difference of two.
type scaleSnap struct {
	at                         time.Time
	worker, webhook, sim       time.Duration // CPU; the worker's summed over the processes
	temporal, postgres         world.ProcessUsage
	apiserver, etcd, kwok      world.ProcessUsage
	host                       world.HostCPU
	kubeRequests               float64 // arcflow's worker + webhook
	githubCalls                int
	answers, rejected, failed  int // the sender's counts
	workflowTask, activityTask world.RequestLatency
	workflowTaskRun            world.RequestLatency
	clientActions              world.Actions
	workerRSS, webhookRSS      int64 // the worker's: summed over the processes
	// workers is each worker process's, leader who held the Lease.
	workers          []workerSnap
	leader           leaderSnap
	liveRunners      int
	liveWorkflows    int64
	liveWorkflowsErr error
	// persistence and requests are the Temporal server's own latencies
	// (persistence_latency, and service_latency without long polls);
	// storeWrites the bytes its store (or PostgreSQL) wrote.
	persistence, requests world.HistogramTotals
	storeWrites           int64
}

// kubeRequestsMetric counts an arcflow process's own Kubernetes API requests,
// reads and watches included (internal/telemetry).
const kubeRequestsMetric = "arcflow_kubernetes_requests_total"

// The Temporal SDK's task latencies in the worker: how long a workflow or
// activity task waited for a poller (a worker short of CPU or pollers shows
// here first), and how long the worker took over a workflow task.
const (
	workflowTaskWait = "temporal_workflow_task_schedule_to_start_latency_seconds"
	activityTaskWait = "temporal_activity_schedule_to_start_latency_seconds"
	workflowTaskRun  = "temporal_workflow_task_execution_latency_seconds"
)

func takeScaleSnap(ctx context.Context, s *session, w *world.World) (scaleSnap, error) {
	snap := scaleSnap{at: time.Now(), webhook: w.Webhook.CPU(), sim: world.SelfCPU(), host: world.ReadHostCPU()}
	snap.workers = takeWorkerSnaps(ctx, w)
	for _, p := range snap.workers {
		snap.worker += p.cpu
		snap.workerRSS += p.rss
	}
	snap.leader = readLeader(ctx, w)
	snap.temporal, snap.postgres = s.serverUsage()
	snap.apiserver = world.UsageOf(s.stack.PID("kube-apiserver"))
	snap.etcd = world.UsageOf(s.stack.PID("etcd"))
	snap.kwok = world.UsageOf(s.stack.PID("kwok"))
	snap.webhookRSS = w.Webhook.RSS()
	snap.liveRunners = w.Runners.LivePods()
	snap.githubCalls = len(w.GitHub.Calls())
	stats := w.Sender.Stats()
	snap.answers, snap.rejected, snap.failed = len(stats.Latencies), stats.Rejected, stats.Failed
	for _, url := range slices.Concat(w.WorkerMetricsURLs, w.WebhookMetricsURLs) {
		n, err := world.CounterSum(ctx, url, kubeRequestsMetric)
		if err != nil {
			return snap, err
		}
		snap.kubeRequests += n
	}
	var err error
	if snap.workflowTask, err = histogramOfAll(ctx, w.WorkerMetricsURLs, workflowTaskWait); err != nil {
		return snap, err
	}
	if snap.activityTask, err = histogramOfAll(ctx, w.WorkerMetricsURLs, activityTaskWait); err != nil {
		return snap, err
	}
	if snap.workflowTaskRun, err = histogramOfAll(ctx, w.WorkerMetricsURLs, workflowTaskRun); err != nil {
		return snap, err
	}
	if snap.clientActions, err = world.ClientActions(ctx, slices.Concat(w.WorkerMetricsURLs, w.WebhookMetricsURLs)...); err != nil {
		return snap, err
	}
	if url := s.stack.TemporalMetricsURL; url != "" {
		if snap.persistence, err = world.HistogramTotalsOf(ctx, url, "persistence_latency", nil); err != nil {
			return snap, err
		}
		if snap.requests, err = world.HistogramTotalsOf(ctx, url, "service_latency", notLongPoll); err != nil {
			return snap, err
		}
	}
	snap.storeWrites = world.WriteBytes(s.stack.PID("temporal")) + world.WriteBytes(s.stack.PID("temporal-server")) + world.WriteBytes(s.stack.PID("postgres"))
	// A count is one more request to the server under load; a failure leaves the
	// column unmeasured rather than the step failed.
	snap.liveWorkflows, snap.liveWorkflowsErr = countRunningWorkflows(ctx, s)
	return snap, nil
}

// histogramOfAll is the histogram family name summed over the processes.
func histogramOfAll(ctx context.Context, urls []string, name string) (world.RequestLatency, error) {
	var sum world.RequestLatency
	for _, url := range urls {
		h, err := world.HistogramOf(ctx, url, name, nil)
		if err != nil {
			return sum, err
		}
		if sum, err = sum.Plus(h); err != nil {
			return sum, fmt.Errorf("%s: %w", name, err)
		}
	}
	return sum, nil
}

// notLongPoll leaves out the server's long polls (a poll waits up to a minute
// for a task by design), so the mean is of requests that do work.
func notLongPoll(labels map[string]string) bool {
	op := labels["operation"]
	return !strings.HasPrefix(op, "Poll") && op != "GetTaskQueueUserData" && op != "ListNexusEndpoints"
}

// countRunningWorkflows counts every running workflow in the Temporal
// namespace (autoscalers, pools and runners of every Kubernetes namespace).
func countRunningWorkflows(ctx context.Context, s *session) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := world.CountWorkflows(ctx, s.temporal, "ExecutionStatus = 'Running'")
	if err != nil {
		return 0, fmt.Errorf("count running workflows: %w", err)
	}
	return n, nil
}
