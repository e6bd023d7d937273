package replaytest

import (
	"testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A rollout whose old runners are all finishing (issue 25, GetVersion
// surge-counts-draining): two busy ephemeral runners, a template change that
// brings one new runner (desired 2, surge 1), then both old jobs complete with
// the count still 2. The pool waits for the old pods instead of creating a
// second new runner beside them.
func TestRecordSurgeHistories(t *testing.T) {
	needServers(t)
	t.Run("pool-rollout-draining", func(t *testing.T) {
		r := newRecorder(t, plain, "pool-rollout-draining")
		spec := poolSpec("pool-rollout-draining", v1alpha1.KindRunnerDeployment, 2, true)
		id, run := r.startPool(spec)
		var old []string
		for _, runner := range waitPool(r, id, ready(2, "t1")).Runners {
			old = append(old, runner.Name)
			fakes.set(fakes.busy, runner.Name, true)
		}
		spec.Generation, spec.TemplateHash = 2, "t2"
		spec.Runner.Spec.Labels = []string{"linux", "v2"}
		r.signal(id, contract.SignalSpec, spec)
		waitPool(r, id, poolCond{"one new runner registered beside the two busy old ones", func(s workflows.PoolState) bool {
			return len(s.Runners) == 3 && s.Runners[2].TemplateHash == "t2" && s.Runners[2].Registered
		}})
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 2, Finished: old})
		waitPool(r, id, poolCond{"the old runners finishing, no second new runner", func(s workflows.PoolState) bool {
			return s.Scale != nil && len(s.Runners) == 3 && s.Runners[0].Finishing && s.Runners[1].Finishing
		}})
		for _, name := range old {
			fakes.set(fakes.busy, name, false)
		}
		r.deletePool(id, run)
		r.finish()
	})
}
