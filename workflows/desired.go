package workflows

import (
	"time"
)

// DesiredInput is everything the desired replica count depends on.
type DesiredInput struct {
	Now      time.Time
	Min, Max int
	// Suggested is what the pull metrics suggest; nil without metrics.
	Suggested *int
	// Reserved counts unexpired reservations (webhook jobs and spec entries).
	Reserved int
	// IdleRunners are kept on top of what the jobs need (the idle buffer).
	IdleRunners int
	// Previous decision and the last scale-out, for the scale-down delay.
	PreviousDesired *int
	LastScaleOut    time.Time
	ScaleDownDelay  time.Duration
	// Force, while unexpired, sets the count outright.
	Force *ForceScale
}

// ForceScale is the payload of the force-scale signal, also sent from the CLI:
//
//	temporal workflow signal --workflow-id hra/NS/NAME --name force-scale --input '{"replicas":5,"duration":"30m"}'
type ForceScale struct {
	Replicas int    `json:"replicas"`
	Duration string `json:"duration"`
	// Since and Until are set by the workflow when it accepts the request.
	Since time.Time `json:"since,omitempty"`
	Until time.Time `json:"until,omitempty"`
	// HandBack, set by `arcflow drain`, hands the queued jobs back to ARC
	// while the count is held (handback.go).
	HandBack bool `json:"handBack,omitempty"`
}

// DesiredOutput is the decision.
type DesiredOutput struct {
	Desired int
	// ScaledOut is true when the count went up: the scale-down delay restarts.
	ScaledOut bool
	// HoldUntil is when a held count may drop (zero when nothing is held).
	HoldUntil time.Time
	// Demand is the count before the scale-down hold: what the jobs need now.
	Demand int
}

// DesiredReplicas is ARC's computation (reference §3.2): metrics or min, plus the
// reservations, clamped to [min, max], and held for the scale-down delay after a
// scale-out. One fix: a metric already counts the jobs that reservations stand for
// (queued runs, busy runners), so the two are combined with max, not added (ARC
// issue #1962). An idle buffer adds its runners on top of that, within max;
// the pool creates them like any other (they are part of Demand).
func DesiredReplicas(in DesiredInput) DesiredOutput {
	if in.Force != nil && in.Now.Before(in.Force.Until) {
		forced := max(in.Force.Replicas, 0)
		return DesiredOutput{Desired: forced, Demand: forced, ScaledOut: in.PreviousDesired == nil || in.Force.Replicas > *in.PreviousDesired}
	}
	desired := in.Min + in.Reserved
	if in.Suggested != nil {
		desired = max(*in.Suggested, desired)
	}
	desired = max(in.Min, min(desired+max(in.IdleRunners, 0), in.Max))

	out := DesiredOutput{Demand: desired}
	prev := in.PreviousDesired
	hold := in.LastScaleOut.Add(in.ScaleDownDelay)
	switch {
	case prev != nil && *prev > desired && !in.LastScaleOut.IsZero() && in.Now.Before(hold):
		out.Desired, out.HoldUntil = *prev, hold
	case prev == nil:
		out.Desired, out.ScaledOut = desired, desired > 0
	default:
		out.Desired, out.ScaledOut = desired, desired > *prev
	}
	return out
}
