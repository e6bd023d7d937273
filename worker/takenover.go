package worker

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// runnersTakenOver is the condition type of a pool that runs runners it took
// over rather than created.
const runnersTakenOver = "RunnersTakenOver"

// runnersTakenOverCondition reads a pool's status, as its workflow writes it:
// RunnersTakenOver=True while runners it took over (ARC's, or its own after
// Temporal lost their workflows) still run; False once the last has ended. A
// pool that never took one over gets no such condition.
func runnersTakenOverCondition(u *unstructured.Unstructured) (metav1.Condition, bool) {
	n, _, _ := unstructured.NestedInt64(u.Object, "status", "takenOverRunners")
	c := metav1.Condition{Type: runnersTakenOver, ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now()}
	switch {
	case n > 0:
		c.Status, c.Reason = metav1.ConditionTrue, "RunnersRunning"
		c.Message = fmt.Sprintf("%d runner(s) the pool took over (ARC's, or its own whose workflows Temporal lost) still run; a busy one finishes its job, and the pool replaces them as they leave", n)
	case conditionStatus(u, runnersTakenOver) != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "AllEnded", "every runner the pool took over has ended"
	default:
		return c, false
	}
	return c, true
}

// takenOverChanged says whether a pool's status write changed its count of
// runners taken over.
func takenOverChanged(old, cur *unstructured.Unstructured) bool {
	a, _, _ := unstructured.NestedInt64(old.Object, "status", "takenOverRunners")
	b, _, _ := unstructured.NestedInt64(cur.Object, "status", "takenOverRunners")
	return a != b
}

// refreshTakenOver writes a pool's RunnersTakenOver condition after its
// workflow wrote a status that changes it, keeping the other conditions.
func (w *ResourceWatcher) refreshTakenOver(ctx context.Context, kind string, u *unstructured.Unstructured) {
	c, ok := runnersTakenOverCondition(u)
	if !ok {
		return
	}
	if _, _, err := w.replaceCondition(ctx, kind, u, c); err != nil {
		w.Log.Warn("cannot write the RunnersTakenOver condition", "pool", u.GetNamespace()+"/"+u.GetName(), "error", err)
	}
}
