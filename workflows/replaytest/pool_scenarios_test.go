package replaytest

import (
	"fmt"
	"testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

func poolSpec(name, kind string, replicas int, ephemeral bool) workflows.PoolSpec {
	runner := runnerTemplate()
	runner.Kind = kind
	return workflows.PoolSpec{
		Namespace: ns, Kind: kind, Name: name, Generation: 1, Replicas: replicas, Ephemeral: ephemeral,
		Scope: scope, TemplateHash: "t1", Runner: runner, RunnerTimings: fastRunner,
	}
}

// startPool starts a pool and returns its workflow ID and first run ID.
func (r *recorder) startPool(spec workflows.PoolSpec) (id, run string) {
	id = contract.PoolWorkflowID(spec.Namespace, spec.Kind, spec.Name)
	return id, r.start(id, workflows.PoolWorkflow, workflows.PoolInput{Spec: spec})
}

// poolCond is a state a scenario waits for a pool to reach.
type poolCond struct {
	what string
	ok   func(workflows.PoolState) bool
}

// ready: the pool has n runners of the template, all registered, none stopping.
func ready(n int, hash string) poolCond {
	return poolCond{fmt.Sprintf("%d registered runners of template %s", n, hash), func(s workflows.PoolState) bool {
		if len(s.Runners) != n {
			return false
		}
		for _, runner := range s.Runners {
			if !runner.Registered || runner.Stopping || runner.RegistrationOnly || runner.TemplateHash != hash {
				return false
			}
		}
		return true
	}}
}

func waitPool(r *recorder, id string, cond poolCond) workflows.PoolState {
	r.t.Helper()
	return waitState(r, id, cond.what, cond.ok)
}

// deletePool drains a pool, then exports it and every runner it started.
func (r *recorder) deletePool(id, run string) {
	r.t.Helper()
	r.signal(id, contract.SignalDelete, nil)
	r.waitDone(id, nil)
	r.exportChildren(r.export("", id, run))
}

func TestRecordPoolHistories(t *testing.T) {
	needServers(t)
	t.Run("pool-scale", func(t *testing.T) {
		// Up from 1 to 3, down to 1 around a busy runner, then deleted.
		r := newRecorder(t, plain, "pool-scale")
		id, run := r.startPool(poolSpec("pool-scale", v1alpha1.KindRunnerDeployment, 1, false))
		waitPool(r, id, ready(1, "t1"))
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 3})
		busy := waitPool(r, id, ready(3, "t1")).Runners[0].Name
		fakes.set(fakes.busy, busy, true)
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 1})
		waitPool(r, id, poolCond{"only the busy runner left", func(s workflows.PoolState) bool {
			return len(s.Runners) == 1 && s.Runners[0].Name == busy
		}})
		fakes.set(fakes.busy, busy, false)
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-start-activity", func(t *testing.T) {
		// Since runner-starts-activity: each decision's runners start in one
		// StartWorkflows activity, 2 and then 2 more.
		r := newRecorder(t, plain, "pool-start-activity")
		id, run := r.startPool(poolSpec("pool-start-activity", v1alpha1.KindRunnerDeployment, 2, false))
		waitPool(r, id, ready(2, "t1"))
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 4})
		waitPool(r, id, ready(4, "t1"))
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-rollout", func(t *testing.T) {
		// A template change: new runners first, old ones drained.
		r := newRecorder(t, plain, "pool-rollout")
		spec := poolSpec("pool-rollout", v1alpha1.KindRunnerDeployment, 2, false)
		id, run := r.startPool(spec)
		waitPool(r, id, ready(2, "t1"))
		spec.Generation, spec.TemplateHash = 2, "t2"
		spec.Runner.Spec.Labels = []string{"linux", "v2"}
		r.signal(id, contract.SignalSpec, spec)
		waitPool(r, id, ready(2, "t2"))
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-scaleset-replaced", func(t *testing.T) {
		// The pool's scale set deleted by the service and made again: its
		// runners are replaced as in a rollout (scaleset-replaced-rolls).
		r := newRecorder(t, plain, "pool-scaleset-replaced")
		spec := poolSpec("pool-scaleset-replaced", v1alpha1.KindRunnerDeployment, 2, true)
		spec.ScaleSet = &v1alpha1.ScaleSetRef{Name: "replaced-set"}
		id, run := r.startPool(spec)
		r.signal(id, contract.SignalScaleSetID, contract.ScaleSetID{ID: 7, Name: "replaced-set"})
		// JIT runners: each tells its pool it registered once its pod is Ready.
		podsReady := func(st workflows.PoolState) {
			for _, runner := range st.Runners {
				if !runner.Registered && !runner.Stopping {
					id := contract.RunnerWorkflowID(ns, runner.Name)
					r.poll("the pod of "+runner.Name+" signalled", func() (bool, string) { // once its workflow has started
						err := r.c.SignalWorkflow(r.ctx, id, "", contract.SignalPod, running(runner.Name, "1", true))
						return err == nil, fmt.Sprint(err)
					})
				}
			}
		}
		podsReady(waitPool(r, id, poolCond{"two runners", func(s workflows.PoolState) bool { return len(s.Runners) == 2 }}))
		first := waitPool(r, id, ready(2, "t1"))
		r.signal(id, contract.SignalScaleSetID, contract.ScaleSetID{ID: 8, Name: "replaced-set"})
		isNew := func(name string) bool { return name != first.Runners[0].Name && name != first.Runners[1].Name }
		for replaced := 0; replaced < 2; replaced++ {
			podsReady(waitPool(r, id, poolCond{fmt.Sprintf("%d new runner(s)", replaced+1), func(s workflows.PoolState) bool {
				n := 0
				for _, runner := range s.Runners {
					if isNew(runner.Name) {
						n++
					}
				}
				return n > replaced
			}}))
		}
		waitPool(r, id, poolCond{"two new runners, of the new set", func(s workflows.PoolState) bool {
			if !ready(2, "t1").ok(s) || s.ScaleSetID != 8 {
				return false
			}
			return isNew(s.Runners[0].Name) && isNew(s.Runners[1].Name)
		}})
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-runnerset", func(t *testing.T) {
		r := newRecorder(t, plain, "pool-runnerset")
		id, run := r.startPool(poolSpec("pool-runnerset", v1alpha1.KindRunnerSet, 1, true))
		waitPool(r, id, ready(1, "t1"))
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-registration-only", func(t *testing.T) {
		// At zero the pool keeps one registered, offline runner; scaled up, it goes.
		r := newRecorder(t, plain, "pool-registration-only")
		spec := poolSpec("pool-registration-only", v1alpha1.KindRunnerDeployment, 0, true)
		spec.RegistrationOnly = true
		id, run := r.startPool(spec)
		waitPool(r, id, poolCond{"a registered registration-only runner", func(s workflows.PoolState) bool {
			return len(s.Runners) == 1 && s.Runners[0].RegistrationOnly && s.Runners[0].Registered
		}})
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 1})
		waitPool(r, id, ready(1, "t1"))
		r.deletePool(id, run)
		r.finish()
	})
	t.Run("pool-continue-as-new", func(t *testing.T) {
		// Runners started by the first run end under a later one.
		r := newRecorder(t, compact, "pool-continue-as-new")
		id, run := r.startPool(poolSpec("pool-continue-as-new", v1alpha1.KindRunnerDeployment, 2, false))
		waitPool(r, id, ready(2, "t1"))
		// An idle pool runs no workflow task to see the suggestion: repeat the
		// count it has until it continues as new.
		for i := 0; i < compactHistory && !r.continued(id, run); i++ {
			r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 2})
		}
		r.waitContinued(id, run)
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 0})
		waitPool(r, id, poolCond{"no runners", func(s workflows.PoolState) bool { return len(s.Runners) == 0 }})
		r.deletePool(id, run)
		r.finish()
	})
}
