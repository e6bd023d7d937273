package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github/scaleset"
)

// pollTimeout bounds one message poll: the service holds it about 50 s.
const pollTimeout = 90 * time.Second

// PollScaleSet deletes the message the workflow recorded, then long-polls the
// session's queue until a message comes, looping over empty polls and
// retrying 5xx, 429 and transport errors itself, so an idle or flaky service
// costs no Temporal action. It returns a message, the session's or the set's
// loss, or nothing once MaxWait passed. The worker's heartbeat interceptor
// keeps it alive; a worker that dies mid-poll loses nothing, as the message is
// deleted only once a later poll is asked to. While it runs, this worker alone
// exports the set's gauges (ScaleSetMetrics).
func (s *ScaleSets) PollScaleSet(ctx context.Context, in calls.PollScaleSetInput) (calls.PollScaleSetOutput, error) {
	c, err := s.client(ctx, in.Set.Scope)
	if err != nil {
		return calls.PollScaleSetOutput{}, err
	}
	scope, setID, session := in.Set.Scope, in.Set.ID, in.SessionID
	stopBeats := heartbeatEvery(ctx, 5*time.Second)
	defer stopBeats()
	defer s.Metrics.polling(in)()
	if in.AckMessageID != 0 {
		err := c.DeleteMessage(ctx, scope, setID, session, in.AckMessageID)
		if out, done := lostOrGone(err); done {
			return out, nil
		}
		if err != nil {
			return calls.PollScaleSetOutput{}, fmt.Errorf("delete message %d of scale set %d: %w", in.AckMessageID, setID, err)
		}
	}
	if in.AcquireListed {
		// Never fatal: the jobs it would acquire are announced again, and the
		// poll finds out by itself whether the session or the set is gone.
		if err := s.acquireListed(ctx, c, in); err != nil {
			activity.GetLogger(ctx).Warn("scale set's acquirable jobs not acquired; polling on", "scaleSet", setID, "error", err)
		}
	}
	var out calls.PollScaleSetOutput
	deadline := time.Now().Add(in.MaxWait)
	retry := s.retryBase()
	for time.Now().Before(deadline) {
		pollCtx, cancel := context.WithTimeout(ctx, pollTimeout)
		msg, err := c.GetMessage(pollCtx, scope, setID, session, in.LastMessageID, in.MaxCapacity)
		cancel()
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if lost, done := lostOrGone(err); done {
			lost.EmptyPolls = out.EmptyPolls
			return lost, nil
		}
		switch {
		case err != nil && scaleset.Retryable(err):
			wait := max(retry, scaleset.RetryAfterOf(err))
			activity.GetLogger(ctx).Warn("scale set poll failed; retrying", "scaleSet", setID, "in", wait, "error", err)
			if !sleep(ctx, wait) {
				return out, ctx.Err()
			}
			retry = min(2*retry, s.retryMax())
			continue
		case err != nil:
			return out, fmt.Errorf("poll scale set %d: %w", setID, err)
		case msg == nil:
			out.EmptyPolls++
			retry = s.retryBase()
			continue
		case msg.Type != scaleset.JobMessagesType:
			// Not a message of jobs: nothing in it for the workflow. It is
			// deleted here, or it would come back on every poll.
			activity.GetLogger(ctx).Warn("scale set message of an unknown type deleted unread", "scaleSet", setID, "message", msg.ID, "type", msg.Type)
			if err := c.DeleteMessage(ctx, scope, setID, session, msg.ID); err != nil {
				if lost, done := lostOrGone(err); done {
					return lost, nil
				}
				return out, fmt.Errorf("delete message %d of scale set %d: %w", msg.ID, setID, err)
			}
			continue
		}
		if err := s.acquireAvailable(ctx, c, in, msg); err != nil {
			if lost, done := lostOrGone(err); done {
				return lost, nil
			}
			return out, err
		}
		s.Metrics.received(in, msg)
		out.Message = queueMessage(msg)
		return out, nil
	}
	return out, nil
}

// lostOrGone turns a lost session or a deleted set into the poll's outcome:
// the set by its typeName; the session by its own, or by a 404 on its queue,
// which is the session's (a 404 elsewhere, such as on a message already
// deleted, loses nothing).
func lostOrGone(err error) (calls.PollScaleSetOutput, bool) {
	var se *scaleset.ServiceError
	switch {
	case err == nil:
		return calls.PollScaleSetOutput{}, false
	case errors.Is(err, scaleset.ErrScaleSetNotFound):
		return calls.PollScaleSetOutput{SetGone: true}, true
	case sessionEnded(err), errors.As(err, &se) && se.Status == http.StatusNotFound && se.Op == "get message":
		return calls.PollScaleSetOutput{SessionLost: true}, true
	}
	return calls.PollScaleSetOutput{}, false
}

// acquireAvailable acquires the jobs a message offers (GitHub Enterprise
// Server): without that, they are never assigned. Acquiring again after a
// failover is harmless; the service answers with what it gave.
func (s *ScaleSets) acquireAvailable(ctx context.Context, c *scaleset.Client, in calls.PollScaleSetInput, msg *scaleset.Message) error {
	var ids []int64
	for _, j := range msg.Jobs {
		if j.MessageType == scaleset.JobAvailable && j.RunnerRequestID != 0 {
			ids = append(ids, j.RunnerRequestID)
		}
	}
	return s.acquire(ctx, c, in, ids)
}

// acquireListed acquires what the set may acquire now: the jobs announced
// while no session polled.
func (s *ScaleSets) acquireListed(ctx context.Context, c *scaleset.Client, in calls.PollScaleSetInput) error {
	jobs, err := c.AcquirableJobs(ctx, in.Set.Scope, in.Set.ID)
	if err != nil {
		return fmt.Errorf("list the acquirable jobs of scale set %d: %w", in.Set.ID, err)
	}
	ids := make([]int64, 0, len(jobs))
	for _, j := range jobs {
		ids = append(ids, j.RunnerRequestID)
	}
	return s.acquire(ctx, c, in, ids)
}

func (s *ScaleSets) acquire(ctx context.Context, c *scaleset.Client, in calls.PollScaleSetInput, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	acquired, err := c.AcquireJobs(ctx, in.Set.Scope, in.Set.ID, in.SessionID, ids)
	if err != nil {
		return fmt.Errorf("acquire %d jobs for scale set %d: %w", len(ids), in.Set.ID, err)
	}
	activity.GetLogger(ctx).Info("scale set jobs acquired", "scaleSet", in.Set.ID, "asked", len(ids), "acquired", len(acquired))
	return nil
}

// queueMessage is a message as the workflow records it.
func queueMessage(msg *scaleset.Message) *calls.ScaleSetQueueMessage {
	out := &calls.ScaleSetQueueMessage{ID: msg.ID, Statistics: statisticsOf(msg.Statistics)}
	for _, j := range msg.Jobs {
		repo := j.RepositoryName
		if j.OwnerName != "" {
			repo = j.OwnerName + "/" + j.RepositoryName
		}
		out.Jobs = append(out.Jobs, calls.ScaleSetJob{
			Type: j.MessageType, JobID: j.JobID, RequestID: j.RunnerRequestID, RunID: j.WorkflowRunID,
			Repository: repo, JobName: j.JobDisplayName, RunnerID: j.RunnerID, RunnerName: j.RunnerName, Result: j.Result,
			QueuedAt: parseStamp(j.QueueTime), RunnerAssignedAt: parseStamp(j.RunnerAssignTime),
		})
	}
	return out
}

func parseStamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func (s *ScaleSets) retryBase() time.Duration {
	if s.RetryBase > 0 {
		return s.RetryBase
	}
	return time.Second
}

func (s *ScaleSets) retryMax() time.Duration {
	if s.RetryMax > 0 {
		return s.RetryMax
	}
	return 30 * time.Second
}

// heartbeatEvery records a heartbeat every d until the returned func is
// called. The SDK sends at most one per 80 % of the heartbeat timeout, so d
// only bounds how stale the last one may be.
func heartbeatEvery(ctx context.Context, d time.Duration) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// sleep waits d unless ctx ends first; it reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
