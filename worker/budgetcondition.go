package worker

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
)

// gitHubBudget is the condition type of an HRA whose GitHub credential's call
// budget arcflow has spent (github.Client.Throttled): False with reason
// Throttled while it defers what can wait, True with WithinBudget once the
// rate-limit window reset. An HRA never throttled has no such condition.
const gitHubBudget = "GitHubBudget"

// budgetCheckEvery is how often the leader looks at each credential's budget:
// the condition follows the throttling within it.
const budgetCheckEvery = 15 * time.Second

// Throttler is what a GitHub client says of its call budget (github.Client).
type Throttler interface {
	// ThrottledSince reports whether arcflow's share of the rate limit is
	// spent, or was found spent after t.
	ThrottledSince(t time.Time) bool
	// BudgetReset is when the current rate-limit window ends.
	BudgetReset() time.Time
}

// watchBudgets keeps every HRA's GitHubBudget condition in step with its
// credential's budget, until ctx ends. A Warning event says when arcflow
// starts throttling itself, a Normal one when it stops.
func (w *ResourceWatcher) watchBudgets(ctx context.Context) {
	if w.Budgets == nil {
		return
	}
	tick := time.NewTicker(budgetCheckEvery)
	defer tick.Stop()
	for {
		w.checkBudgets(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// checkBudgets looks at each HRA's credential once. A throttling that began
// and ended between two looks is shown at the second, and cleared at the next.
func (w *ResourceWatcher) checkBudgets(ctx context.Context) {
	since := w.lastBudgetCheck
	w.lastBudgetCheck = time.Now()
	objs, err := w.hras.List(labels.Everything())
	if err != nil {
		return
	}
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		var hra v1alpha1.HorizontalRunnerAutoscaler
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra) != nil {
			continue
		}
		target, err := hraspec.ResolveTarget(&hra, w.rds, w.rss)
		if err != nil {
			continue // its Accepted condition says why
		}
		spec, err := hraspec.Of(&hra, target, w.Autoscaling)
		if err != nil {
			continue
		}
		budget, err := w.Budgets(ctx, spec.Scope.Credentials)
		if err != nil {
			continue
		}
		if c, ok := budgetCondition(u, budget, since); ok {
			w.writeBudgetCondition(ctx, u, c)
		}
	}
}

// budgetCondition is the HRA's GitHubBudget condition as its credential's
// budget says it should be, and whether that changes what the HRA shows.
func budgetCondition(u *unstructured.Unstructured, budget Throttler, since time.Time) (metav1.Condition, bool) {
	c := metav1.Condition{Type: gitHubBudget, ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now()}
	have := conditionStatus(u, gitHubBudget)
	switch throttled := budget.ThrottledSince(since); {
	case throttled && have != string(metav1.ConditionFalse):
		c.Status, c.Reason = metav1.ConditionFalse, "Throttled"
		c.Message = fmt.Sprintf("arcflow spent its share of this GitHub credential's rate limit (--github-budget-share) until %s: "+
			"runner-list refreshes and the missed-webhook reconcile wait for the reset; registration tokens, JIT configurations and runner removals go on",
			budget.BudgetReset().UTC().Format(time.RFC3339))
	case !throttled && have == string(metav1.ConditionFalse):
		c.Status, c.Reason = metav1.ConditionTrue, "WithinBudget"
		c.Message = "the rate-limit window reset: arcflow calls GitHub as usual"
	default:
		return c, false
	}
	return c, true
}

// writeBudgetCondition writes c, keeping the other conditions, and records
// an event: Warning when throttling starts, Normal when it ends.
func (w *ResourceWatcher) writeBudgetCondition(ctx context.Context, u *unstructured.Unstructured, c metav1.Condition) {
	_, changed, err := w.replaceCondition(ctx, kindHRA, u, c)
	if err != nil {
		w.Log.Warn("cannot write the GitHubBudget condition", "hra", u.GetNamespace()+"/"+u.GetName(), "error", err)
		return
	}
	if !changed {
		return
	}
	if c.Status == metav1.ConditionFalse {
		w.event(ctx, kindHRA, u, "GitHubBudgetThrottled", c.Message)
		return
	}
	w.normalEvent(ctx, kindHRA, u, "GitHubBudgetRecovered", c.Message)
}
