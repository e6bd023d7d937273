package worker

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arcflow/arcflow/activities"
)

// runnersFailing is the condition type of a pool whose runners cannot start.
const runnersFailing = "RunnersFailing"

// runnersFailingCondition reads a pool's status, as its workflow writes it:
// RunnersFailing=True while runners in a row could not start, with the count and
// the last reason; False once a runner registered after that. A pool that never
// had a failing runner gets no such condition.
func runnersFailingCondition(u *unstructured.Unstructured) (metav1.Condition, bool) {
	failing, _, _ := unstructured.NestedInt64(u.Object, "status", "failingRunners")
	last, _, _ := unstructured.NestedString(u.Object, "status", "lastRunnerFailure")
	c := metav1.Condition{Type: runnersFailing, ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now()}
	switch {
	case failing > 0:
		c.Status, c.Reason = metav1.ConditionTrue, conditionReason(last)
		c.Message = fmt.Sprintf("%d runner(s) in a row could not start (the last: %s); the next waits 10 s, doubling up to 10 min, until one registers (in a JIT or scale-set pool: until one takes a job)", failing, last)
	case conditionStatus(u, runnersFailing) != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "RunnerRegistered", "a runner registered after the failures"
	default:
		return c, false
	}
	return c, true
}

// conditionOf is the resource's condition of this type, as it was written.
func conditionOf(u *unstructured.Unstructured, conditionType string) (metav1.Condition, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != conditionType {
			continue
		}
		var out metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &out) == nil {
			return out, true
		}
	}
	return metav1.Condition{}, false
}

// conditionStatus is the status of the resource's condition of this type, ""
// when it has none.
func conditionStatus(u *unstructured.Unstructured, conditionType string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			status, _ := m["status"].(string)
			return status
		}
	}
	return ""
}

// conditionReason turns a runner's end reason (pod-failed) into a condition
// reason (PodFailed).
func conditionReason(endReason string) string {
	var b strings.Builder
	for _, word := range strings.Split(endReason, "-") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	if b.Len() == 0 {
		return "RunnerCannotStart"
	}
	return b.String()
}

// failingChanged says whether a pool's status write changed what its
// RunnersFailing condition shows.
func failingChanged(old, cur *unstructured.Unstructured) bool {
	for _, field := range []string{"failingRunners", "lastRunnerFailure"} {
		a, _, _ := unstructured.NestedFieldNoCopy(old.Object, "status", field)
		b, _, _ := unstructured.NestedFieldNoCopy(cur.Object, "status", field)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return true
		}
	}
	return false
}

// refreshRunnersFailing writes a pool's RunnersFailing condition after its
// workflow wrote a status that changes it, keeping the other conditions, and
// records one Warning event when the pool starts failing.
func (w *ResourceWatcher) refreshRunnersFailing(ctx context.Context, kind string, u *unstructured.Unstructured) {
	c, ok := runnersFailingCondition(u)
	if !ok {
		return
	}
	before, changed, err := w.replaceCondition(ctx, kind, u, c)
	if err != nil {
		w.Log.Warn("cannot write the RunnersFailing condition", "pool", u.GetNamespace()+"/"+u.GetName(), "error", err)
		return
	}
	if changed {
		w.reportFailingStart(ctx, kind, before, c)
	}
}

// replaceCondition writes c in place of the resource's condition of its type
// (or after the others), keeping the rest; it writes nothing, and reports
// false, when that condition already says the same. It returns the resource
// as it was before the write.
func (w *ResourceWatcher) replaceCondition(ctx context.Context, kind string, u *unstructured.Unstructured, c metav1.Condition) (*unstructured.Unstructured, bool, error) {
	resources := w.Dynamic.Resource(resourceOf[kind]).Namespace(u.GetNamespace())
	return activities.PatchConditions(ctx, resources, u, func(u *unstructured.Unstructured) (any, bool, error) {
		return activities.WithCondition(u, c, false)
	})
}

// reportFailingStart records one Warning event when c, just written, starts a
// failing streak on u (u as it was before the write): once, not for each runner
// that fails.
func (w *ResourceWatcher) reportFailingStart(ctx context.Context, kind string, u *unstructured.Unstructured, c metav1.Condition) {
	if c.Status == metav1.ConditionTrue && conditionStatus(u, runnersFailing) != string(metav1.ConditionTrue) {
		w.event(ctx, kind, u, runnersFailing, c.Message)
	}
}
