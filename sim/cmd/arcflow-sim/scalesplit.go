package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// The Temporal SDK's counts of the tasks a worker process ran: a workflow task
// or an activity records its execution latency once it ran, a local activity
// (run inside a workflow task) counts itself.
const (
	activityRun      = "temporal_activity_execution_latency_seconds"
	localActivityRun = "temporal_local_activity_total"
)

// workerSnap is one worker process's cumulative counters; tasksErr says its
// task counts could not be read.
type workerSnap struct {
	cpu                                           time.Duration
	rss                                           int64
	workflowTasks, activityTasks, localActivities float64
	kubeRequests                                  float64
	tasksErr                                      error
}

// workerShare is what one worker process did in a step's window.
type workerShare struct {
	cpu                                           float64 // cores
	rss                                           int64   // at the end
	workflowTasks, activityTasks, localActivities float64
	kubeRPS                                       float64 // its own Kubernetes API requests per second
	tasksErr                                      error
}

// leaderSnap is which worker held the Lease when a snapshot was taken: index
// into World.Workers, -1 when no running worker did; err when it was not read.
type leaderSnap struct {
	index int
	err   error
}

// takeWorkerSnaps reads every worker process: CPU and RSS from /proc, the task
// counts from its /metrics.
func takeWorkerSnaps(ctx context.Context, w *world.World) []workerSnap {
	out := make([]workerSnap, len(w.Workers))
	for i, p := range w.Workers {
		s := workerSnap{cpu: p.CPU(), rss: p.RSS()}
		url := w.WorkerMetricsURLs[i]
		wf, err1 := world.HistogramTotalsOf(ctx, url, workflowTaskRun, nil)
		act, err2 := world.HistogramTotalsOf(ctx, url, activityRun, nil)
		local, err3 := world.CounterSum(ctx, url, localActivityRun)
		kube, err4 := world.CounterSum(ctx, url, kubeRequestsMetric)
		s.workflowTasks, s.activityTasks, s.localActivities, s.kubeRequests = wf.Count, act.Count, local, kube
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil && s.tasksErr == nil {
				s.tasksErr = err
			}
		}
		out[i] = s
	}
	return out
}

// readLeader says which worker holds the Lease now.
func readLeader(ctx context.Context, w *world.World) leaderSnap {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	holder, err := w.LeaseHolder(ctx)
	if err != nil {
		return leaderSnap{index: -1, err: err}
	}
	return leaderSnap{index: world.LeaderIndex(holder, w.WorkerPids())}
}

// workerShares is what each worker did between snapshots a and b, wall apart.
func workerShares(a, b []workerSnap, wall time.Duration) []workerShare {
	out := make([]workerShare, 0, len(b))
	for i, end := range b {
		var start workerSnap
		if i < len(a) {
			start = a[i]
		}
		s := workerShare{cpu: (end.cpu - start.cpu).Seconds() / wall.Seconds(), rss: end.rss}
		if s.tasksErr = end.tasksErr; s.tasksErr == nil {
			s.tasksErr = start.tasksErr
		}
		s.workflowTasks = end.workflowTasks - start.workflowTasks
		s.activityTasks = end.activityTasks - start.activityTasks
		s.localActivities = end.localActivities - start.localActivities
		s.kubeRPS = (end.kubeRequests - start.kubeRequests) / wall.Seconds()
		out = append(out, s)
	}
	return out
}

// leads says whether worker i led the Kubernetes watchers over a window, from
// the Lease at its start (a) and its end (b).
func leads(i int, a, b leaderSnap) string {
	switch {
	case a.err != nil || b.err != nil:
		return "not read"
	case a.index == i && b.index == i:
		return "yes"
	case a.index == i:
		return "at the start, not at the end"
	case b.index == i:
		return "at the end, not at the start"
	}
	return "no"
}

func workerName(i int) string { return fmt.Sprintf("worker %d", i+1) }

// share is n and its share of total; "not read" when this count failed, n
// alone when another's did (the total is unknown).
func share(n, total float64, err, othersErr error) string {
	switch {
	case err != nil:
		return "not read"
	case othersErr != nil || total <= 0:
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.0f (%.0f %%)", n, 100*n/total)
}

// splitTable is how each step's work split between the worker processes: one
// line per worker and step, with whether it led the Kubernetes watchers.
func splitTable(rows []scaleRow) string {
	var b strings.Builder
	b.WriteString("| jobs/s | worker | leads the Kubernetes watchers | CPU cores | RSS at end | workflow tasks run (share) | activity tasks run (share) | local activities run (share) | kube API req/s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if !r.measured() || len(r.workers) == 0 {
			fmt.Fprintf(&b, "| %g | not measured | | | | | | | |\n", r.rate)
			continue
		}
		var wf, act, local float64
		var anyErr error
		for _, s := range r.workers {
			wf, act, local = wf+s.workflowTasks, act+s.activityTasks, local+s.localActivities
			if s.tasksErr != nil {
				anyErr = s.tasksErr
			}
		}
		for i, s := range r.workers {
			others := anyErr
			if s.tasksErr != nil {
				others = nil
			}
			kube := "not read"
			if s.tasksErr == nil {
				kube = fmt.Sprintf("%.1f", s.kubeRPS)
			}
			fmt.Fprintf(&b, "| %g | %s | %s | %.2f | %s | %s | %s | %s | %s |\n", r.rate, workerName(i), leads(i, r.leaderStart, r.leaderEnd), s.cpu, mib(s.rss),
				share(s.workflowTasks, wf, s.tasksErr, others), share(s.activityTasks, act, s.tasksErr, others), share(s.localActivities, local, s.tasksErr, others), kube)
		}
	}
	return b.String()
}

// workerCount is "1 worker" or "n workers".
func workerCount(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}
