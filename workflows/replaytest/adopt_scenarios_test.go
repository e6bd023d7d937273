package replaytest

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// arcRunnerSetPool is the pool whose RunnerSet ARC ran before: the fake
// ARCRunnerSet answers for it alone.
const arcRunnerSetPool = "pool-runnerset-arc"

// arcLeftFor is what ARC left of a pool in the fake world: for
// arcRunnerSetPool an idle registered runner with its StatefulSet's claim,
// and the claim of a StatefulSet ARC already deleted; nothing for any other.
func arcLeftFor(name string) activities.ARCRunnerSetRunners {
	if name != arcRunnerSetPool {
		return activities.ARCRunnerSetRunners{}
	}
	runner := arcRunnerSetPool + "-arc01-0"
	claims := func(sts string) activities.ARCClaimSet {
		return activities.ARCClaimSet{StatefulSet: sts, Claims: map[string]string{"cache": "cache-" + sts + "-0"}, Match: true}
	}
	held := claims(arcRunnerSetPool + "-arc01")
	return activities.ARCRunnerSetRunners{
		Runners: []activities.ARCRunner{{Name: runner, Ephemeral: true, RunnerID: runnerID(runner), Claims: &held,
			Pod: activities.PodState{UID: podUID(runner), Exists: true, Phase: corev1.PodRunning, Ready: true}}},
		Claims: []activities.ARCClaimSet{claims(arcRunnerSetPool + "-arc02")},
	}
}

func TestRecordAdoptionHistories(t *testing.T) {
	needServers(t)
	t.Run(arcRunnerSetPool, func(t *testing.T) {
		// Since adopt-arc-runnersets: ARC's runner and claims are taken over,
		// a new runner mounts the claim of a StatefulSet ARC deleted, and the
		// adopted runner is removed when the pool scales to 0.
		for _, r := range arcLeftFor(arcRunnerSetPool).Runners {
			fakes.set(fakes.pods, r.Name, true)
			fakes.set(fakes.created, r.Name, true)
		}
		r := newRecorder(t, plain, arcRunnerSetPool)
		spec := poolSpec(arcRunnerSetPool, v1alpha1.KindRunnerSet, 2, true)
		spec.VolumeHash = "v1"
		spec.Runner.StatefulSet = &appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}}}
		id, run := r.startPool(spec)
		waitPool(r, id, poolCond{"the adopted runner and a new one on ARC's free claim", func(s workflows.PoolState) bool {
			held := 0
			for _, v := range s.Volumes {
				if v.Holder != "" && v.Claims != nil {
					held++
				}
			}
			return len(s.Runners) == 2 && held == 2 && ready(2, "t1").ok(s)
		}})
		r.signal(id, contract.SignalScale, workflows.ScaleRequest{Replicas: 0})
		waitPool(r, id, poolCond{"no runners", func(s workflows.PoolState) bool { return len(s.Runners) == 0 }})
		r.deletePool(id, run)
		r.finish()
	})
}
