package world

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// StartedActivity is an activity attempt a worker has started and not finished.
type StartedActivity struct {
	WorkflowID, ActivityID, ActivityType string
	// RunID is the workflow's run: Rerun reads that run only, so a workflow of
	// the same ID started after Temporal lost its store is not taken for it
	// (Rerun then fails with serviceerror.NotFound).
	RunID     string
	Attempt   int32
	StartedAt time.Time
	// WorkerIdentity is the SDK's "<pid>@<host>@" of the worker running it.
	WorkerIdentity string
	// InWorkflowTask: a runner of RunnerRevisionLocal makes its calls as local
	// activities, inside a workflow task; this is that task, started and not yet
	// completed (ActivityType says so, ActivityID is empty).
	InWorkflowTask bool
}

// RanBy says whether the worker process with this PID runs the attempt.
func (a StartedActivity) RanBy(pid int) bool { return IsProcess(a.WorkerIdentity, pid) }

// IsProcess says whether a Temporal identity is the arcflow process with
// this PID: arcflow names itself <host>-<pid> (internal/identity).
func IsProcess(identity string, pid int) bool {
	return strings.HasSuffix(identity, fmt.Sprintf("-%d", pid))
}

// StartedRunnerActivities lists the started activities of a namespace's running
// runner workflows, from the visibility store and a describe of each workflow.
func StartedRunnerActivities(ctx context.Context, tc client.Client, namespace string) ([]StartedActivity, error) {
	list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = 'RunnerWorkflow' AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return nil, fmt.Errorf("list running runner workflows: %w", err)
	}
	prefix := "runner/" + namespace + "/"
	var out []StartedActivity
	for _, e := range list.GetExecutions() {
		id, runID := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		desc, err := tc.DescribeWorkflowExecution(ctx, id, runID)
		if err != nil {
			continue // closed since it was listed
		}
		if task := desc.GetPendingWorkflowTask(); task.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_STARTED {
			identity, err := taskStartedIdentity(ctx, tc, id, runID, task.GetStartedTime().AsTime())
			if err != nil {
				return nil, err
			}
			if identity != "" {
				out = append(out, StartedActivity{
					WorkflowID: id, RunID: runID, ActivityType: "workflow task (local activities)", Attempt: task.GetAttempt(),
					StartedAt: task.GetStartedTime().AsTime(), WorkerIdentity: identity, InWorkflowTask: true,
				})
			}
		}
		for _, a := range desc.GetPendingActivities() {
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				out = append(out, StartedActivity{
					WorkflowID: id, RunID: runID, ActivityID: a.GetActivityId(), ActivityType: a.GetActivityType().GetName(),
					Attempt: a.GetAttempt(), StartedAt: a.GetLastStartedTime().AsTime(), WorkerIdentity: a.GetLastWorkerIdentity(),
				})
			}
		}
	}
	return out, nil
}

// ErrNotRetried says a started activity finished in the attempt that was seen
// running: it ended before the worker running it was killed, so there is no
// retry to measure.
var ErrNotRetried = errors.New("the activity finished in the attempt seen running: nothing was retried")

// Rerun says when a later attempt of a, by a worker whose identity by accepts,
// ran: when it started, seen among the pending activities, or, if it was too
// quick to be seen running, when it completed, from the history (an upper bound
// of the pick-up). The zero time means not yet; ErrNotRetried that it never will.
func Rerun(ctx context.Context, tc client.Client, a StartedActivity, by func(identity string) bool) (time.Time, string, error) {
	if a.InWorkflowTask {
		return rerunTask(ctx, tc, a, by)
	}
	desc, err := tc.DescribeWorkflowExecution(ctx, a.WorkflowID, a.RunID)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("describe %s: %w", a.WorkflowID, err)
	}
	for _, p := range desc.GetPendingActivities() {
		if p.GetActivityId() != a.ActivityID {
			continue
		}
		if p.GetAttempt() > a.Attempt && p.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && by(p.GetLastWorkerIdentity()) {
			return p.GetLastStartedTime().AsTime(), "started again", nil
		}
		return time.Time{}, "", nil // still pending: not retried yet, or retried and not yet started
	}
	// No longer pending: it completed. Find which attempt completed it.
	events, err := History(ctx, tc, a.WorkflowID, a.RunID)
	if err != nil {
		return time.Time{}, "", err
	}
	var scheduled int64
	attempts := map[int64]*historypb.ActivityTaskStartedEventAttributes{} // by started event ID
	for _, e := range events {
		if s := e.GetActivityTaskScheduledEventAttributes(); s != nil && s.GetActivityId() == a.ActivityID {
			scheduled = e.GetEventId()
		}
		if s := e.GetActivityTaskStartedEventAttributes(); s != nil && s.GetScheduledEventId() == scheduled {
			attempts[e.GetEventId()] = s
		}
		if c := e.GetActivityTaskCompletedEventAttributes(); c != nil && attempts[c.GetStartedEventId()] != nil {
			started := attempts[c.GetStartedEventId()]
			if started.GetAttempt() <= a.Attempt {
				return time.Time{}, "", ErrNotRetried
			}
			if by(started.GetIdentity()) {
				return e.GetEventTime().AsTime(), "completed again", nil
			}
		}
	}
	return time.Time{}, "", nil
}

// taskStartedIdentity is the identity of the worker that started the workflow
// task started at startedAt, from its history; "" when the history does not
// hold it. The latest started event is not it: the task may have ended and
// another started between the describe and this read, or it is a retried
// task, recorded only when it completes. Taking that event's worker for the
// task's killed the wrong worker and waited for a retry that never came.
func taskStartedIdentity(ctx context.Context, tc client.Client, workflowID, runID string, startedAt time.Time) (string, error) {
	events, err := History(ctx, tc, workflowID, runID)
	if err != nil {
		return "", err
	}
	for i := len(events) - 1; i >= 0; i-- {
		started := events[i].GetWorkflowTaskStartedEventAttributes()
		if started != nil && sameInstant(events[i].GetEventTime().AsTime(), startedAt) {
			return started.GetIdentity(), nil
		}
	}
	return "", nil
}

// rerunTask is Rerun of a workflow task: a later task of the workflow, started
// by a worker that by accepts, as its history shows once that task completed
// (a retried task is recorded only then). Its local activities ran in it again.
// The task seen running having completed means it was not caught by the kill.
func rerunTask(ctx context.Context, tc client.Client, a StartedActivity, by func(identity string) bool) (time.Time, string, error) {
	events, err := History(ctx, tc, a.WorkflowID, a.RunID)
	if err != nil {
		return time.Time{}, "", err
	}
	var seen int64 // the started event of the task seen running
	for _, e := range events {
		if done := e.GetWorkflowTaskCompletedEventAttributes(); done != nil && seen != 0 && done.GetStartedEventId() == seen {
			return time.Time{}, "", ErrNotRetried
		}
		started := e.GetWorkflowTaskStartedEventAttributes()
		if started == nil {
			continue
		}
		at := e.GetEventTime().AsTime()
		switch {
		case sameInstant(at, a.StartedAt) && started.GetIdentity() == a.WorkerIdentity:
			seen = e.GetEventId()
		case at.After(a.StartedAt) && by(started.GetIdentity()):
			return at, "workflow task run again", nil
		}
	}
	return time.Time{}, "", nil
}

// sameInstant says whether a history event's time and a describe's time are
// the same moment: the server writes both from one clock reading, and the
// history's encoding rounds it.
func sameInstant(a, b time.Time) bool { return a.Sub(b).Abs() < time.Millisecond }

// TaskHistory lists a workflow run's events, one a line (ID, type, time, and
// for workflow task events the worker and a failure's cause): what a test
// shows when the retry of a killed worker's task is not seen.
func TaskHistory(ctx context.Context, tc client.Client, workflowID, runID string) (string, error) {
	events, err := History(ctx, tc, workflowID, runID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range events {
		at := e.GetEventTime().AsTime().Format("15:04:05.000")
		switch {
		case e.GetWorkflowTaskStartedEventAttributes() != nil:
			a := e.GetWorkflowTaskStartedEventAttributes()
			fmt.Fprintf(&b, "%d %s %s by %s\n", e.GetEventId(), e.GetEventType(), at, a.GetIdentity())
		case e.GetWorkflowTaskCompletedEventAttributes() != nil:
			fmt.Fprintf(&b, "%d %s %s by %s\n", e.GetEventId(), e.GetEventType(), at, e.GetWorkflowTaskCompletedEventAttributes().GetIdentity())
		case e.GetWorkflowTaskFailedEventAttributes() != nil:
			a := e.GetWorkflowTaskFailedEventAttributes()
			fmt.Fprintf(&b, "%d %s %s by %s: %s\n", e.GetEventId(), e.GetEventType(), at, a.GetIdentity(), a.GetCause())
		default:
			fmt.Fprintf(&b, "%d %s %s\n", e.GetEventId(), e.GetEventType(), at)
		}
	}
	return b.String(), nil
}
