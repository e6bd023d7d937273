package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/internal/simworld"
)

// recoveryWatch measures how long a runner's activity that a killed worker was
// running takes to run again on a live replica.
type recoveryWatch struct {
	temporal  client.Client
	namespace string
	run       *chaosRun
}

// runnerActivity is one attempt of a runner workflow's activity.
type runnerActivity struct {
	workflowID, activityID string
	attempt                int32
}

// killWorker SIGKILLs the worker and restarts it, and follows every runner
// activity it was running until another attempt of it starts or completes.
func (r *recoveryWatch) killWorker(ctx context.Context, p *simworld.Process) error {
	caught := r.runningOn(ctx, p.Pid())
	killed := time.Now()
	if err := p.Restart(); err != nil {
		return err
	}
	for _, a := range caught {
		go r.follow(ctx, a, killed)
	}
	return nil
}

// runningOn lists the started activities of the namespace's runner workflows that
// the process with this PID runs (the SDK's identity is "<pid>@<host>@").
func (r *recoveryWatch) runningOn(ctx context.Context, pid int) []runnerActivity {
	list, err := r.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = 'RunnerWorkflow' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return nil // Temporal may be down itself; this kill is then not measured
	}
	prefix, identity := "runner/"+r.namespace+"/", fmt.Sprintf("%d@", pid)
	var out []runnerActivity
	for _, e := range list.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		desc, err := r.temporal.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			continue
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && strings.HasPrefix(a.GetLastWorkerIdentity(), identity) {
				out = append(out, runnerActivity{workflowID: id, activityID: a.GetActivityId(), attempt: a.GetAttempt()})
			}
		}
	}
	return out
}

// follow records when an activity the killed worker ran was running again: a later
// attempt started, or, if one was too quick to be seen running, when it was seen
// no longer pending (an upper bound).
func (r *recoveryWatch) follow(ctx context.Context, a runnerActivity, killed time.Time) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return // never recovered: the run's checks fail on the runner it left
		case <-tick.C:
		}
		desc, err := r.temporal.DescribeWorkflowExecution(ctx, a.workflowID, "")
		if err != nil {
			continue // Temporal restarting, say
		}
		var took time.Duration
		pending := false
		for _, p := range desc.GetPendingActivities() {
			if p.GetActivityId() != a.activityID {
				continue
			}
			pending = true
			if p.GetAttempt() > a.attempt && p.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				took = p.GetLastStartedTime().AsTime().Sub(killed)
			}
		}
		if !pending {
			took = time.Since(killed)
		}
		if took > 0 {
			r.run.mu.Lock()
			r.run.recoveries = append(r.run.recoveries, took)
			r.run.mu.Unlock()
			return
		}
	}
}
