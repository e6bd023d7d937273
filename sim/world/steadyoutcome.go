package world

import (
	"context"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/workflows/contract"
)

// RunnerStop is a stop signal a runner workflow received.
type RunnerStop struct {
	Runner, Reason string
	At             time.Time
}

// RunnerStops reads every stop signal the runner workflows of a namespace
// received, from their histories (every run).
func RunnerStops(ctx context.Context, tc client.Client, namespace string) ([]RunnerStop, error) {
	var stops []RunnerStop
	var token []byte
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = 'RunnerWorkflow' AND WorkflowId STARTS_WITH 'runner/%s/'", namespace),
			NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list runner workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			id, run := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			events := tc.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for events.HasNext() {
				event, err := events.Next()
				if err != nil {
					return nil, fmt.Errorf("history of %s: %w", id, err)
				}
				signal := event.GetWorkflowExecutionSignaledEventAttributes()
				if signal == nil || signal.GetSignalName() != contract.SignalStop {
					continue
				}
				var req struct {
					Reason string `json:"reason"`
				}
				if err := converter.GetDefaultDataConverter().FromPayloads(signal.GetInput(), &req); err != nil {
					return nil, fmt.Errorf("stop signal of %s: %w", id, err)
				}
				stops = append(stops, RunnerStop{Runner: id[len("runner/"+namespace+"/"):], Reason: req.Reason, At: event.GetEventTime().AsTime()})
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return stops, nil
}

// SteadyOutcome is what a SteadyPools load came to.
type SteadyOutcome struct {
	Jobs, Succeeded int
	// Interrupted jobs lost their runner; BusyPodsDeleted lists the pods
	// deleted under a running job (the simulator's violations).
	Interrupted     int
	BusyPodsDeleted []string
	// Stops counts scale-down stops sent while the load ran; StopsWhileQueued
	// those sent while a job for the stopped runner's pool was still queued.
	Stops, StopsWhileQueued int
	// Pods is how many runner pods were created.
	Pods int
	// Waits is job queued -> started.
	Waits Percentiles
}

// PodsPerJob is Pods over Jobs.
func (o SteadyOutcome) PodsPerJob() float64 {
	if o.Jobs == 0 {
		return 0
	}
	return float64(o.Pods) / float64(o.Jobs)
}

func (o SteadyOutcome) String() string {
	return fmt.Sprintf("%d jobs (%d succeeded), %d interrupted, %d busy pods deleted, %d scale-down stops (%d while the pool had a queued job), %.2f pods per job, queued -> started p50/p95/p99 %v",
		o.Jobs, o.Succeeded, o.Interrupted, len(o.BusyPodsDeleted), o.Stops, o.StopsWhileQueued, o.PodsPerJob(), o.Waits)
}

// MeasureSteady reads the outcome of a SteadyPools load that has ended: the
// jobs from the fake GitHub, the pods and violations from the simulator, and
// the stops from the runner workflows, counting stops sent until until.
func MeasureSteady(ctx context.Context, tc client.Client, w *World, load SteadyPools, until time.Time) (SteadyOutcome, error) {
	var out SteadyOutcome
	var jobs []fakegithub.JobInfo
	var waits []time.Duration
	for _, job := range w.GitHub.Jobs() {
		if job.Repo != load.Repository {
			continue
		}
		jobs = append(jobs, job)
		if job.Conclusion == "success" {
			out.Succeeded++
		}
		if !job.StartedAt.IsZero() {
			waits = append(waits, job.StartedAt.Sub(job.CreatedAt))
		}
	}
	out.Jobs, out.Waits = len(jobs), PercentilesOf(waits)
	out.Interrupted, out.BusyPodsDeleted = w.Runners.Interrupted(), w.Runners.Violations()
	out.Pods = len(w.Runners.PodTimes())
	stops, err := RunnerStops(ctx, tc, w.Namespace())
	if err != nil {
		return out, err
	}
	for _, stop := range stops {
		if stop.Reason != "scale-down" || stop.At.After(until) {
			continue
		}
		out.Stops++
		pool := load.PoolOf(stop.Runner)
		if slices.ContainsFunc(jobs, func(j fakegithub.JobInfo) bool { return queuedAt(j, pool, stop.At) }) {
			out.StopsWhileQueued++
		}
	}
	return out, nil
}

// queuedAt: the job asked for pool's labels and was queued, not yet started, at t.
func queuedAt(job fakegithub.JobInfo, pool string, t time.Time) bool {
	return slices.Contains(job.Labels, pool) && !job.CreatedAt.After(t) && (job.StartedAt.IsZero() || job.StartedAt.After(t))
}
