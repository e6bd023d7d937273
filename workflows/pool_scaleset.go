package workflows

import (
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
	}
	s.ScaleSetID = id.ID
}
