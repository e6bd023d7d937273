package workflows

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// CompletionGrace replaces ARC's 10-minute recreation delay after a webhook scale.
// When an ephemeral runner ends after its job, the autoscaler usually hears the
// job's completed webhook within a second. Until it speaks (or this long), an
// autoscaled pool does not replace the runner on the strength of a count that
// still includes the finished job; otherwise it would create a runner nobody needs.
// ARC waits for a newer effective time or 10 minutes, which leaves a job that
// queued beyond maxReplicas waiting when no newer event comes.
const CompletionGrace = 2 * time.Second

// PoolRunner is one runner as its pool tracks it.
type PoolRunner struct {
	Name         string
	TemplateHash string
	Created      time.Time
	// Registered: the runner told the pool GitHub lists it.
	Registered bool
	// Stopping: the pool sent it a stop signal; it is draining.
	Stopping bool `json:",omitempty"`
	// Finishing: an ephemeral runner whose job completed (the autoscaler
	// passed on the completed delivery that named it): it is about to exit, so
	// it is neither capacity nor a runner to stop.
	Finishing bool `json:",omitempty"`
	// Busy: a job's in_progress delivery named it (ScaleRequest.Running) and
	// no completion did since (pool_busy.go).
	Busy bool `json:",omitempty"`
	// RegistrationOnly: the pool's offline placeholder runner, not counted as capacity.
	RegistrationOnly bool `json:",omitempty"`
	// Adopted: a runner ARC left, which the pool took over (pool_adopt.go).
	Adopted bool `json:",omitempty"`
	// PoolWakes: the runner waits for the pool's registration-check, which
	// CheckSent says went out (pool_checks.go).
	PoolWakes bool `json:",omitempty"`
	CheckSent bool `json:",omitempty"`
}

// PoolView is what planPool decides from. Busy is what GitHub last said; nil
// means not asked yet.
type PoolView struct {
	// Desired is the count to keep. Held of them are kept only for the
	// scale-down delay: existing runners stay, but none is created for them.
	Desired         int
	Held            int
	TemplateHash    string
	Ephemeral       bool
	CreateNotBefore time.Time
	// WaitingForScaleSet: the runners join a scale set whose id the pool has
	// not heard yet, so none can be created.
	WaitingForScaleSet bool
	// ReplaceNotBefore defers creation for CompletionGrace after a job finished.
	ReplaceNotBefore time.Time
	// Unheard runners ended after their jobs before the autoscaler counted
	// them: they take the place of as many new runners until UnheardUntil,
	// when the first of them stops counting (pool_unheard.go).
	Unheard      int
	UnheardUntil time.Time
	MaxSurge     int
	Now          time.Time
	Runners      []PoolRunner
	Busy         map[string]bool
	// SafeOrder picks runners to stop in the order of safeVictims, for which
	// PodPhases (nil: not asked yet) tells pods that run a runner process from
	// those that do not. Runs from before it keep the older order.
	SafeOrder bool
	PodPhases map[string]corev1.PodPhase
	// SurgeCountsDraining keeps a rollout's surge while old runners are only
	// draining (see planPool). Runs from before it keep the older rule.
	SurgeCountsDraining bool
	// RolloutByDemand sizes a rollout by the demand (Desired - Held), with
	// DemandSurge beyond it, and counts old ephemeral runners the deliveries
	// showed busy (PoolRunner.Busy) as serving their jobs (see planPool). Runs
	// from before it roll toward Desired with MaxSurge, though the held part
	// of Desired asks for no runner.
	RolloutByDemand bool
	DemandSurge     int
	// AskBusyOld: under RolloutByDemand, in a pool that hears its jobs
	// start, before creating a runner beside registered old ephemeral
	// runners that no delivery showed busy, ask GitHub's list
	// (PoolPlan.NeedBusyListed): an autoscaler passes a job's start only with
	// its next scale request, so a busy old runner may not be marked yet, and
	// a new runner beside it would wait for a job that already runs. Runs
	// from before it create beside them.
	AskBusyOld bool
	// Ceiling is the autoscaler's maxReplicas (zero: none). Outside a rollout,
	// runners that are stopping or finishing count against it: their pods
	// still run, and maxReplicas bounds pods, not capacity.
	Ceiling int
}

// PoolPlan is one step toward the desired pool.
type PoolPlan struct {
	Create int
	Stop   []string
	// NeedBusy: choosing runners to stop needs GitHub's busy flags; ask and plan again.
	NeedBusy bool
	// NeedBusyListed: the deliveries cannot tell, so the flags must come from
	// GitHub's list (PoolView.AskBusyOld).
	NeedBusyListed bool `json:",omitempty"`
	// NeedPods: choosing among unregistered runners needs their pods' phases.
	NeedPods bool `json:",omitempty"`
	// WakeAt: plan again then: creation is deferred until then, or unheard
	// completions stop counting (zero: no need).
	WakeAt time.Time
	// Blocked: runners should go but all candidates are busy; plan again later.
	Blocked bool
	// CreateRegistrationOnly: start the pool's registration-only runner.
	CreateRegistrationOnly bool `json:",omitempty"`
}

// planPool decides which runners to create and stop. It never stops a busy
// runner; a template change creates new runners before it drains old ones, with at
// most MaxSurge runners beyond the desired count (DemandSurge beyond the demand
// under RolloutByDemand).
func planPool(v PoolView) PoolPlan {
	var current, old []PoolRunner
	stopping, drainingOld, busyOld, unknownOld := 0, 0, 0, 0
	for _, r := range v.Runners {
		switch {
		case r.Stopping || r.Finishing:
			stopping++
			if r.TemplateHash != v.TemplateHash {
				drainingOld++
			}
		case r.TemplateHash == v.TemplateHash:
			current = append(current, r)
		default:
			old = append(old, r)
			switch {
			case !v.Ephemeral:
			case r.Busy || v.Busy[r.Name]:
				busyOld++
			default:
				// Registered or not: the pool hears of a registration from
				// the job's start, which may not be passed on yet.
				unknownOld++
			}
		}
	}

	// Old runners go once registered new ones can take their place; current ones
	// beyond the desired count go too.
	excessOld := len(old)
	if v.Desired > 0 {
		ready := 0
		for _, r := range current {
			if r.Registered {
				ready++
			}
		}
		excessOld = min(len(old), max(0, ready+len(old)-v.Desired))
	}
	excessCurrent := max(0, len(current)-v.Desired)

	var plan PoolPlan
	if excessOld > 0 || excessCurrent > 0 {
		needBusy := v.Busy == nil && ((excessOld > 0 && anyRegistered(old)) || (excessCurrent > 0 && anyRegistered(current)))
		needPods := v.SafeOrder && v.PodPhases == nil &&
			((excessOld > 0 && anyUnregistered(old)) || (excessCurrent > 0 && anyUnregistered(current)))
		if !v.SafeOrder {
			needBusy = v.Busy == nil && (anyRegistered(old) || (excessCurrent > 0 && anyRegistered(current)))
		}
		if needBusy || needPods {
			return PoolPlan{NeedBusy: needBusy, NeedPods: needPods}
		}
		pick := victims
		if v.SafeOrder {
			pick = func(runners []PoolRunner, busy map[string]bool, n int) []string {
				return safeVictims(runners, busy, v.PodPhases, n)
			}
		}
		stopOld := pick(old, v.Busy, excessOld)
		stopCurrent := pick(current, v.Busy, excessCurrent)
		plan.Stop = append(stopOld, stopCurrent...)
		plan.Blocked = len(stopOld) < excessOld || len(stopCurrent) < excessCurrent
	}

	demand := v.Desired - max(v.Held, 0)
	want := demand - len(current)
	if len(old) > 0 || (v.SurgeCountsDraining && drainingOld > 0) {
		// During a rollout, every pod counts against desired + surge, including
		// old runners still draining. The rollout lasts until the last old pod
		// is gone, not until the last old runner was asked to stop: busy old
		// runners that were stopped keep their pods until their jobs end, and
		// without them in the count the pool would create a whole new set
		// beside them (issue 25: 20 pods for a desired 10).
		limit := v.Desired + max(v.MaxSurge, 1)
		if v.RolloutByDemand {
			// The count held for the scale-down delay keeps runners but asks
			// for none, so neither does the rollout: its target and surge are
			// the demand's. A busy old ephemeral runner serves its job and then
			// leaves by itself: a new runner comes for a job that waits, or in
			// its place once it left and the demand is still there (issue 37:
			// 10 new runners beside 10 busy old ones for 10 jobs).
			limit = demand + max(v.DemandSurge, 1)
			if v.AskBusyOld && v.Busy == nil && unknownOld > 0 && min(want-busyOld, limit-len(current)-len(old)-stopping) > 0 {
				return PoolPlan{NeedBusy: true, NeedBusyListed: true}
			}
			want -= busyOld
		}
		want = min(want, limit-len(current)-len(old)-stopping)
	} else if v.Ceiling > 0 {
		// A finishing runner's replacement waits for its pod to go rather
		// than run one pod beyond maxReplicas (a quota sized to it refuses
		// the pod; the full-path test counted 5 pods at maxReplicas 4).
		want = min(want, v.Ceiling-len(current)-stopping)
	}
	if want > 0 && v.Unheard > 0 {
		want -= v.Unheard
		plan.WakeAt = v.UnheardUntil // the first of them stops counting then
	}
	if want <= 0 {
		return plan
	}
	switch {
	case v.WaitingForScaleSet: // the scale-set-id signal wakes the pool
	case v.Now.Before(v.CreateNotBefore):
		plan.WakeAt = v.CreateNotBefore
	case v.Now.Before(v.ReplaceNotBefore):
		plan.WakeAt = v.ReplaceNotBefore
	default:
		plan.Create = want
	}
	return plan
}

func anyRegistered(runners []PoolRunner) bool {
	for _, r := range runners {
		if r.Registered {
			return true
		}
	}
	return false
}

func anyUnregistered(runners []PoolRunner) bool {
	for _, r := range runners {
		if !r.Registered {
			return true
		}
	}
	return false
}

// victims is the order of pools from before SafeOrder: unregistered runners
// first, then idle ones, newest first (ARC's newest-to-oldest retention rule).
func victims(runners []PoolRunner, busy map[string]bool, n int) []string {
	if n <= 0 {
		return nil
	}
	candidates := make([]PoolRunner, 0, len(runners))
	for _, r := range runners {
		if !r.Registered || !busy[r.Name] {
			candidates = append(candidates, r)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		if candidates[i].Registered != candidates[j].Registered {
			return !candidates[i].Registered
		}
		return candidates[i].Created.After(candidates[j].Created)
	})
	var out []string
	for _, r := range candidates[:min(n, len(candidates))] {
		out = append(out, r.Name)
	}
	return out
}

// safeVictims picks up to n runners to stop, never a busy one, cheapest and
// safest first, newest first within each rank (ARC's retention rule):
//
//  0. unregistered runners whose pod runs no runner process: still Pending,
//     ended, or gone; nothing can register there, so the pod goes at once;
//  1. registered idle runners: RemoveRunner is atomic, and a 422 keeps one
//     that took a job after all;
//  2. unregistered runners whose pod is Running, only while the surplus
//     remains: they wait to be listed before they can be removed, and are the
//     ones the next job would start on soonest.
func safeVictims(runners []PoolRunner, busy map[string]bool, phases map[string]corev1.PodPhase, n int) []string {
	if n <= 0 {
		return nil
	}
	rank := func(r PoolRunner) int {
		switch {
		case r.Registered:
			return 1
		case phases[r.Name] == corev1.PodRunning:
			return 2
		}
		return 0
	}
	candidates := make([]PoolRunner, 0, len(runners))
	for _, r := range runners {
		if !r.Registered || !busy[r.Name] {
			candidates = append(candidates, r)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		if ri, rj := rank(candidates[i]), rank(candidates[j]); ri != rj {
			return ri < rj
		}
		return candidates[i].Created.After(candidates[j].Created)
	})
	var out []string
	for _, r := range candidates[:min(n, len(candidates))] {
		out = append(out, r.Name)
	}
	return out
}
