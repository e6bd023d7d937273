package workflows

import (
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
