package replaytest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// An ephemeral runner ends after its job before the autoscaler heard the
// completion (GetVersion unheard-completions): the pool counts it as capacity
// instead of replacing it, and forgets it when the autoscaler names it.
func TestRecordUnheardHistories(t *testing.T) {
	needServers(t)
	t.Run("pool-unheard-completion", func(t *testing.T) {
		r := newRecorder(t, plain, "pool-unheard-completion")
		id, run := r.startPool(poolSpec("pool-unheard-completion", v1alpha1.KindRunnerDeployment, 0, true))
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 2, NamesFinished: true})
		ended := waitPool(r, id, ready(2, "t1")).Runners[0].Name
		r.signal(contract.RunnerWorkflowID(ns, ended), contract.SignalPod, exited(ended, "2", corev1.PodSucceeded))
		waitPool(r, id, poolCond{"the ended runner counted, not replaced", func(s workflows.PoolState) bool {
			return len(s.Unheard) == 1 && s.Unheard[0].Name == ended && len(s.Runners) == 1
		}})
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 1, NamesFinished: true, Finished: []string{ended}})
		waitPool(r, id, poolCond{"the autoscaler heard it", func(s workflows.PoolState) bool {
			return len(s.Unheard) == 0 && s.Scale != nil && s.Scale.Replicas == 1 && len(s.Runners) == 1
		}})
		r.deletePool(id, run)
		r.finish()
	})
}
