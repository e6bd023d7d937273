package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// capacityFollowsVersion marks listeners that reissue their poll when the
// set's capacity changes. Before it, a poll kept the X-ScaleSetMaxCapacity
// it started with for as long as it looped over empty polls (up to
// PollMaxWait), and the service assigned no more jobs than that: a set whose
// HRA came after its listener's first poll got no job for up to an hour.
const capacityFollowsVersion = "scaleset-capacity-follows"

// capacityChanged says whether the set's capacity is no longer the one the
// running poll sends. The version is asked only when it is not, so histories
// without such a change carry no marker.
func (l *listener) capacityChanged(ctx workflow.Context, in calls.PollScaleSetInput) bool {
	if l.state.Spec.MaxRunners == in.MaxCapacity {
		return false
	}
	return workflow.GetVersion(ctx, capacityFollowsVersion, workflow.DefaultVersion, 1) >= 1
}

// sessionConditionVersion marks listeners that write the pool's
// ScaleSetSession condition.
const sessionConditionVersion = "scaleset-session-condition"

// reportSession tells the pool's resource whether this listener holds the
// set's session or who does, when that changed since the last report; a
// report that fails is tried at the next change.
func (l *listener) reportSession(ctx workflow.Context) {
	s := &l.state
	want := "open"
	if s.HeldBy != "" {
		want = "held: " + s.HeldBy
	}
	if want == s.Reported || workflow.GetVersion(ctx, sessionConditionVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	in := calls.ScaleSetSessionReport{
		Pool:       calls.PoolResourceRef{Namespace: s.Spec.Namespace, Kind: s.Spec.Kind, Name: s.Spec.Pool},
		ScaleSetID: s.ScaleSetID, Holder: s.HeldBy,
	}
	if err := workflow.ExecuteActivity(scaleSetCallOptions(ctx), calls.ReportScaleSetSession, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("scale set session not reported on the pool", "scaleSet", s.Spec.Name, "error", err)
		return
	}
	s.Reported = want
}

// conflictInActivityVersion marks listeners that wait out another listener's
// session inside the open activity, which tries again every 5 to 10 s for up
// to sessionConflictActivityWait: the set is taken within 10 s of its release
// for one activity every 5 minutes. Before it, the listener waited on timers
// of 5 s doubling to 60 s, so a session held 45 s delayed jobs 75 s.
const conflictInActivityVersion = "scaleset-conflict-in-activity"

// sessionConflictActivityWait is how long one open activity waits out a
// conflict before it hands back to the workflow.
const sessionConflictActivityWait = 5 * time.Minute

// conflictWaitsInActivity says whether the next open waits out the conflict
// in its activity; the choice is recorded once a run (ConflictInActivity).
func (l *listener) conflictWaitsInActivity(ctx workflow.Context) bool {
	s := &l.state
	if !s.ConflictInActivity {
		s.ConflictInActivity = workflow.GetVersion(ctx, conflictInActivityVersion, workflow.DefaultVersion, 1) >= 1
	}
	return s.ConflictInActivity
}

// conflictWaitOptions: an open that waits out a conflict heartbeats, so a
// dead worker's wait moves to another within the heartbeat timeout.
func conflictWaitOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: sessionConflictActivityWait + time.Minute,
		HeartbeatTimeout:    30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
}
