package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Job message types (calls.ScaleSetJob.Type), as the service names them.
const (
	scaleSetJobAvailable = "JobAvailable"
	scaleSetJobAssigned  = "JobAssigned"
	scaleSetJobStarted   = "JobStarted"
	scaleSetJobCompleted = "JobCompleted"
)

// record takes a message into the workflow: the open jobs by job id, the
// statistics, and the cursor. Redeliveries and reassignments change nothing:
// each job message moves its job to a state, by job id.
func (l *listener) record(ctx workflow.Context, msg calls.ScaleSetQueueMessage) {
	s := &l.state
	s.LastMessageID, s.Unacked = msg.ID, msg.ID
	s.Statistics = msg.Statistics
	s.Messages++
	if s.Jobs == nil {
		s.Jobs = map[string]ScaleSetJob{}
	}
	now := workflow.Now(ctx)
	var events []contract.JobEvent
	for _, j := range msg.Jobs {
		job, known := s.Jobs[j.JobID]
		switch j.Type {
		case scaleSetJobAvailable, scaleSetJobAssigned:
			state := "assigned"
			if j.Type == scaleSetJobAvailable {
				state = "available"
			}
			if known && job.State == "started" {
				continue // an assignment older than the start it came after
			}
			s.Jobs[j.JobID] = ScaleSetJob{State: state, Repository: j.Repository, Since: now}
			if !known {
				// A job's arrival, once: what an auto buffer learns its rate from.
				events = append(events, jobEventOf(j, "queued"))
			}
		case scaleSetJobStarted:
			if known && job.State == "started" && job.RunnerName == j.RunnerName {
				continue
			}
			s.Jobs[j.JobID] = ScaleSetJob{State: "started", RunnerName: j.RunnerName, Repository: j.Repository, Since: now}
			events = append(events, jobEventOf(j, "in_progress"))
		case scaleSetJobCompleted:
			if j.RunnerName == "" {
				// Withdrawn: no runner took it; the service assigns it again.
				s.Jobs[j.JobID] = ScaleSetJob{State: "withdrawn", Repository: j.Repository, Since: now}
				continue
			}
			delete(s.Jobs, j.JobID)
			events = append(events, jobEventOf(j, "completed"))
		default:
			workflow.GetLogger(ctx).Debug("unknown scale set job message ignored", "type", j.Type)
		}
	}
	l.sendDemand(ctx, msg.ID, events)
}

// jobEventOf is a job message as the autoscaler's job events carry it.
func jobEventOf(j calls.ScaleSetJob, action string) contract.JobEvent {
	ev := contract.JobEvent{
		JobID: contract.ScaleSetJobKey(j.JobID), RunID: j.RunID, Action: action, Repository: j.Repository,
		RunnerName: j.RunnerName, RunnerID: j.RunnerID, QueuedAt: j.QueuedAt, StartedAt: j.RunnerAssignedAt, JobName: j.JobName,
		ScaleSetJob: true,
	}
	if action == "completed" {
		ev.Conclusion = conclusionOf(j.Result)
	}
	return ev
}

// conclusionOf maps the service's result onto the REST API's conclusion.
func conclusionOf(result string) string {
	switch result {
	case "succeeded":
		return "success"
	case "failed":
		return "failure"
	case "canceled":
		return "cancelled"
	}
	return result
}

// sendDemand tells the autoscaler the set's demand and job events. It waits
// for the signal to land, so messages reach the autoscaler in order.
func (l *listener) sendDemand(ctx workflow.Context, messageID int64, events []contract.JobEvent) {
	s := &l.state
	if s.Spec.Autoscaler == "" {
		workflow.GetLogger(ctx).Warn("scale set demand not sent", "scaleSet", s.Spec.Name, "error", errNoAutoscaler)
		return
	}
	msg := contract.ScaleSetMessage{ScaleSetID: s.ScaleSetID, MessageID: messageID, Assigned: s.Statistics.Assigned, Events: events}
	if err := workflow.SignalExternalWorkflow(ctx, s.Spec.Autoscaler, "", contract.SignalScaleSet, msg).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("scale set demand not sent", "scaleSet", s.Spec.Name, "autoscaler", s.Spec.Autoscaler, "error", err)
	}
}
