package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// onScaleSetID takes the id of the scale set the pool's runners join, from
// the set's listener (ScaleSetWorkflow). Until it comes, the pool creates no
// runner: a runner's JIT configuration is the set's.
func (p *poolRun) onScaleSetID(ctx workflow.Context, id contract.ScaleSetID) {
	s := &p.state
	if s.Spec.ScaleSet == nil || id.ID == 0 || id.ID == s.ScaleSetID {
		return
	}
	if s.ScaleSetID != 0 {
		// The service deleted the old set; runners made from its JIT
		// configurations get no more jobs. New runners join the new one.
		workflow.GetLogger(ctx).Warn("scale set replaced; new runners join the new one", "pool", s.Spec.Name, "old", s.ScaleSetID, "new", id.ID)
		p.retireSetRunners(ctx, s.ScaleSetID)
	}
	s.ScaleSetID = id.ID
}

// scaleSetReplacedVersion marks pools that replace the runners of a scale set
// the service deleted. Before it, they stayed, idle, until a scale-down.
const scaleSetReplacedVersion = "scaleset-replaced-rolls"

// retireSetRunners marks every runner as made for another template: each was
// made from the replaced set's JIT configuration, as a runner of the pool's
// previous template was from that template. The rollout then replaces them
// as it replaces those, within the surge, never stopping a busy one.
func (p *poolRun) retireSetRunners(ctx workflow.Context, old int64) {
	runners := p.state.Runners
	if len(runners) == 0 || workflow.GetVersion(ctx, scaleSetReplacedVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	for i := range runners {
		runners[i].TemplateHash = fmt.Sprintf("%s@scale-set-%d", runners[i].TemplateHash, old)
	}
	p.events = append(p.events, fmt.Sprintf("ScaleSetReplaced: runner scale set %d is gone; its %d runner(s) are replaced by runners of the new one", old, len(runners)))
}
