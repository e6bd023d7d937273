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
		return older
	}
	return plan
}
