package workflows

import (
	"reflect"

	"go.temporal.io/sdk/workflow"
)

// surgeDrainingVersion marks pools whose rollout surge counts old runners that
// are only draining (PoolView.SurgeCountsDraining). Before it, the surge ended
// as soon as every old runner had been asked to stop or was finishing, though
// a busy one keeps its pod until its job ends.
const surgeDrainingVersion = "surge-counts-draining"

// surgeCountsDraining says whether this plan counts draining old runners
// against the surge. It asks for the version only when the answer changes the
// plan, every old runner draining, so pools that never roll that way record
// no marker.
func (p *poolRun) surgeCountsDraining(ctx workflow.Context) bool {
	s := &p.state
	draining := false
	for _, r := range s.Runners {
		if r.RegistrationOnly || r.TemplateHash == s.Spec.TemplateHash {
			continue
		}
		if !r.Stopping && !r.Finishing {
			return false // an old runner still live: the surge applies anyway
		}
		draining = true
	}
	return draining && workflow.GetVersion(ctx, surgeDrainingVersion, workflow.DefaultVersion, 1) >= 1
}

// rolloutByDemandVersion marks pools that size a rollout by the demand and
// count busy old ephemeral runners as serving their jobs
// (PoolView.RolloutByDemand). Before it, a pool held above its demand for the
// scale-down delay rolled toward the held count, with a surge of half of it,
// and created new runners beside busy old ones that no job waited for.
const rolloutByDemandVersion = "rollout-by-demand"

// planRollout is planPool under this run's rollout rule. It asks for the version
// only when the demand rule changes the plan, so pools that never roll under
// a held count or beside busy runners the deliveries named record no marker.
func (p *poolRun) planRollout(ctx workflow.Context, v PoolView) PoolPlan {
	v.RolloutByDemand = false
	older := planPool(v)
	v.RolloutByDemand = true
	plan := planPool(v)
	if reflect.DeepEqual(plan, older) || workflow.GetVersion(ctx, rolloutByDemandVersion, workflow.DefaultVersion, 1) < 1 {
		plan = older
	}
	if s := p.state.Scale; s == nil || !s.StartsDelivered || p.state.BusyListedFor == p.state.Spec.TemplateHash {
		// Busy old runners are known from deliveries only where starts are
		// delivered; and GitHub's list is read once per rollout.
		return plan
	}
	v.AskBusyOld = true
	asking := planPool(v)
	if !asking.NeedBusyListed || workflow.GetVersion(ctx, rolloutAsksBusyVersion, workflow.DefaultVersion, 1) < 1 {
		return plan
	}
	return asking
}

// rolloutAsksBusyVersion marks pools that ask GitHub which old runners are
// busy before a rollout creates beside them (PoolView.AskBusyOld). It is
// asked for only when that changes the plan.
const rolloutAsksBusyVersion = "rollout-asks-busy"

// busyOldRunners reads, from a list of the scope's runners read now, which of
// the pool's old runners are busy, registered in the pool's eyes or not (it
// hears of a registration from the job's start), and keeps the answer: busy
// ones serve their jobs and then leave, and the rollout's next plans need not
// ask again. When GitHub cannot tell, none counts as busy: the rollout then
// surges as before.
func (p *poolRun) busyOldRunners(ctx workflow.Context) map[string]bool {
	s := &p.state
	s.BusyListedFor = s.Spec.TemplateHash
	var names []string
	for _, r := range s.Runners {
		if r.TemplateHash != s.Spec.TemplateHash && !r.Stopping && !r.Finishing && !r.RegistrationOnly {
			names = append(names, r.Name)
		}
	}
	busy, err := p.askBusy(ctx, names, true)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot tell which old runners are busy", "pool", s.Spec.Name, "error", err)
		return map[string]bool{}
	}
	for i := range s.Runners {
		r := &s.Runners[i]
		if busy[r.Name] {
			r.Busy, r.Registered = true, true // GitHub gave it a job, so it registered
		}
		if r.Busy {
			busy[r.Name] = true // and those the deliveries named, for any choice of runners to stop
		}
	}
	return busy
}
