package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
)

// ScaleSets holds the Actions service activities of runner scale set
// listeners. Register one value with the worker.
type ScaleSets struct {
	// Clients gives the Actions service client that acts for a scope's
	// credentials (the worker's own, or its githubAPICredentialsFrom Secret's).
	Clients func(ctx context.Context, scope github.Scope) (*scaleset.Client, error)
	// Metrics are the sets' arcflow_gha_ metrics; nil exports none.
	Metrics *ScaleSetMetrics
	// RetryBase and RetryMax pace a poll's retries of 5xx, 429 and transport
	// errors inside the activity (1 s and 30 s when zero), so a flaky service
	// costs no Temporal action.
	RetryBase, RetryMax time.Duration
	// ConflictRetry paces the tries of a session another holds (5 s,
	// doubling once, when zero).
	ConflictRetry time.Duration
}

func (s *ScaleSets) client(ctx context.Context, scope github.Scope) (*scaleset.Client, error) {
	if s.Clients == nil {
		return nil, errors.New("this worker has no Actions service client")
	}
	c, err := s.Clients(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("scale set client for %s: %w", scope, err)
	}
	return c, nil
}

// EnsureScaleSet finds the set (by KnownID, then by name in its runner group)
// or creates it. It is idempotent: a set made by an attempt whose answer was
// lost is found by name by the next.
func (s *ScaleSets) EnsureScaleSet(ctx context.Context, in calls.EnsureScaleSetInput) (calls.EnsureScaleSetOutput, error) {
	c, err := s.client(ctx, in.Scope)
	if err != nil {
		return calls.EnsureScaleSetOutput{}, err
	}
	groupID, err := c.RunnerGroupID(ctx, in.Scope, in.RunnerGroup)
	if err != nil {
		return calls.EnsureScaleSetOutput{}, fmt.Errorf("scale set %s: %w", in.Name, err)
	}
	if in.KnownID != 0 {
		set, err := c.GetScaleSet(ctx, in.Scope, in.KnownID)
		switch {
		case err == nil && set.Name == in.Name && set.RunnerGroupID == groupID:
			return calls.EnsureScaleSetOutput{ID: set.ID, RunnerGroupID: groupID}, nil
		case err != nil && !errors.Is(err, scaleset.ErrScaleSetNotFound):
			return calls.EnsureScaleSetOutput{}, fmt.Errorf("scale set %s (%d): %w", in.Name, in.KnownID, err)
		}
	}
	replaced := in.KnownID != 0
	set, found, err := c.FindScaleSet(ctx, in.Scope, groupID, in.Name)
	if err != nil {
		return calls.EnsureScaleSetOutput{}, fmt.Errorf("find scale set %s: %w", in.Name, err)
	}
	if found {
		return calls.EnsureScaleSetOutput{ID: set.ID, RunnerGroupID: groupID, Replaced: replaced && set.ID != in.KnownID}, nil
	}
	set, err = c.CreateScaleSet(ctx, in.Scope, scaleset.ScaleSet{Name: in.Name, RunnerGroupID: groupID, Labels: in.Labels, DisableUpdate: true})
	if err != nil {
		return calls.EnsureScaleSetOutput{}, fmt.Errorf("create scale set %s: %w", in.Name, err)
	}
	activity.GetLogger(ctx).Info("scale set created", "name", in.Name, "id", set.ID, "scope", in.Scope.String())
	return calls.EnsureScaleSetOutput{ID: set.ID, RunnerGroupID: groupID, Created: true, Replaced: replaced}, nil
}

// OpenScaleSetSession refreshes the session the workflow holds, or creates
// one, deleting first the session the workflow lost. A conflict and a deleted
// set are outcomes, not errors: the workflow waits on a timer, or finds the
// set again. A session the service opened without a queue was deleted by the
// client; the error makes the activity try again.
func (s *ScaleSets) OpenScaleSetSession(ctx context.Context, in calls.OpenScaleSetSessionInput) (calls.OpenScaleSetSessionOutput, error) {
	c, err := s.client(ctx, in.Set.Scope)
	if err != nil {
		return calls.OpenScaleSetSessionOutput{}, err
	}
	if in.SessionID != "" {
		sess, err := c.RefreshSession(ctx, in.Set.Scope, in.Set.ID, in.SessionID)
		switch {
		case err == nil:
			return calls.OpenScaleSetSessionOutput{SessionID: sess.ID, Statistics: statisticsOf(sess.Statistics)}, nil
		case errors.Is(err, scaleset.ErrScaleSetNotFound):
			return calls.OpenScaleSetSessionOutput{SetGone: true}, nil
		case !sessionEnded(err):
			return calls.OpenScaleSetSessionOutput{}, fmt.Errorf("refresh the session of scale set %d: %w", in.Set.ID, err)
		}
		in.Stale = in.SessionID
	}
	if in.Stale != "" {
		err := c.DeleteSession(ctx, in.Set.Scope, in.Set.ID, in.Stale)
		switch {
		case errors.Is(err, scaleset.ErrScaleSetNotFound):
			return calls.OpenScaleSetSessionOutput{SetGone: true}, nil
		case err != nil && !sessionEnded(err):
			return calls.OpenScaleSetSessionOutput{}, fmt.Errorf("delete the lost session of scale set %d: %w", in.Set.ID, err)
		}
	}
	sess, err := s.createWaitingOutConflicts(ctx, c, in)
	var se *scaleset.ServiceError
	switch {
	case err == nil:
		return calls.OpenScaleSetSessionOutput{SessionID: sess.ID, Statistics: statisticsOf(sess.Statistics)}, nil
	case errors.Is(err, scaleset.ErrSessionConflict):
		out := calls.OpenScaleSetSessionOutput{Conflict: true}
		if errors.As(err, &se) {
			out.Holder = se.Message
		}
		return out, nil
	case errors.Is(err, scaleset.ErrScaleSetNotFound):
		return calls.OpenScaleSetSessionOutput{SetGone: true}, nil
	}
	return calls.OpenScaleSetSessionOutput{}, fmt.Errorf("open a session of scale set %d: %w", in.Set.ID, err)
}

// createWaitingOutConflicts creates the session; while another holds the
// set, it tries again every 5 s, then 10 s, for up to in.WaitOnConflict:
// waiting here costs the workflow no action, and the set is taken within
// seconds of its release.
func (s *ScaleSets) createWaitingOutConflicts(ctx context.Context, c *scaleset.Client, in calls.OpenScaleSetSessionInput) (scaleset.Session, error) {
	deadline := time.Now().Add(in.WaitOnConflict)
	if in.WaitOnConflict > 0 {
		defer heartbeatEvery(ctx, 5*time.Second)()
	}
	wait := s.conflictRetry()
	for {
		sess, err := c.CreateSession(ctx, in.Set.Scope, in.Set.ID, in.Owner)
		if !errors.Is(err, scaleset.ErrSessionConflict) || time.Now().Add(wait).After(deadline) {
			return sess, err
		}
		if !sleep(ctx, wait) {
			return sess, err
		}
		wait = min(2*wait, 2*s.conflictRetry())
	}
}

func (s *ScaleSets) conflictRetry() time.Duration {
	if s.ConflictRetry > 0 {
		return s.ConflictRetry
	}
	return 5 * time.Second
}

// sessionEnded says whether err means the session is over: evicted (404) or
// expired (400).
func sessionEnded(err error) bool {
	return errors.Is(err, scaleset.ErrSessionNotFound) || errors.Is(err, scaleset.ErrSessionExpired)
}

// CloseScaleSetSession deletes the session; a session already gone is closed.
func (s *ScaleSets) CloseScaleSetSession(ctx context.Context, in calls.CloseScaleSetSessionInput) error {
	c, err := s.client(ctx, in.Set.Scope)
	if err != nil {
		return err
	}
	err = c.DeleteSession(ctx, in.Set.Scope, in.Set.ID, in.SessionID)
	if err != nil && !errors.Is(err, scaleset.ErrScaleSetNotFound) && !sessionEnded(err) {
		return fmt.Errorf("close the session of scale set %d: %w", in.Set.ID, err)
	}
	return nil
}

func statisticsOf(st scaleset.Statistics) calls.ScaleSetStatistics {
	return calls.ScaleSetStatistics{
		Available: st.TotalAvailableJobs, Acquired: st.TotalAcquiredJobs, Assigned: st.TotalAssignedJobs, Running: st.TotalRunningJobs,
		Registered: st.TotalRegisteredRunners, Busy: st.TotalBusyRunners, Idle: st.TotalIdleRunners,
	}
}
