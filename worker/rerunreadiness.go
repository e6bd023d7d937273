package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// Re-running lost jobs needs workflow_job "completed" deliveries: they name
// the runner of a failed job, which the pool matches with the runner it lost.
// Only an HRA with a scaleUpTriggers[].githubEvent.workflowJob trigger gets
// them for its pool, so arcflow.dev/rerun-lost-jobs on a pool without one
// would do nothing, silently. The pool's RerunLostJobs condition says so
// instead (False, NoWorkflowJobTrigger, with one Warning event), and turns True
// once such an HRA scales the pool. A pool of a runner scale set
// (arcflow.dev/scale-set) with an HRA needs no trigger: the set's listener
// sends its completions.

// addWorkflowJobTrigger is what the condition's message tells to add.
const addWorkflowJobTrigger = "scaleUpTriggers: [{githubEvent: {workflowJob: {}}, duration: 30m}]"

// rerunReadiness is what pool u's RerunLostJobs condition should say about its
// workflowJob trigger, given hras (the HRAs of its namespace). change is false
// when the condition stays as it is; remove says to take it away (the
// annotation went after the condition said NoWorkflowJobTrigger). The
// condition's other reasons (the re-run workflows': NoActionsWrite, Rerunning)
// are left alone while a trigger is there.
func rerunReadiness(kind string, u *unstructured.Unstructured, hras []*unstructured.Unstructured) (c metav1.Condition, remove, change bool) {
	limit, err := v1alpha1.RerunLostJobs(u.GetAnnotations())
	wanted := err == nil && limit > 0
	cur, has := conditionOf(u, activities.RerunLostJobsCondition)
	ours := has && cur.Reason == activities.RerunNoWorkflowJobTrigger
	if !wanted && !ours {
		return c, false, false // most pools: no HRA is looked at
	}
	scaling, trigger := hrasOf(kind, u.GetName(), hras)
	set, ofScaleSet, _ := v1alpha1.ScaleSetOf(u.GetAnnotations(), true)
	listened := ofScaleSet && len(scaling) > 0
	c = metav1.Condition{Type: activities.RerunLostJobsCondition, ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now()}
	switch {
	case wanted && ofScaleSet && !listened:
		c.Status, c.Reason = metav1.ConditionFalse, activities.RerunNoWorkflowJobTrigger
		c.Message = fmt.Sprintf("%s is set, but no HorizontalRunnerAutoscaler scales this %s: the listener of runner scale set %s "+
			"reports completed jobs to the HRA that scales the pool, so none is re-run; add an HRA with scaleTargetRef {kind: %s, name: %s}",
			v1alpha1.RerunLostJobsAnnotation, kind, set.Name, kind, u.GetName())
		return c, false, !(ours && cur.Status == c.Status && cur.Message == c.Message)
	case wanted && trigger == "" && !listened:
		c.Status, c.Reason = metav1.ConditionFalse, activities.RerunNoWorkflowJobTrigger
		if len(scaling) == 0 {
			c.Message = fmt.Sprintf("%s is set, but no HorizontalRunnerAutoscaler scales this %s: lost jobs are found through workflow_job "+
				"deliveries, which only an HRA with a workflowJob trigger gets, so none is re-run; add an HRA with scaleTargetRef "+
				"{kind: %s, name: %s} and %s, and a GitHub webhook that sends workflow_job events",
				v1alpha1.RerunLostJobsAnnotation, kind, kind, u.GetName(), addWorkflowJobTrigger)
		} else {
			c.Message = fmt.Sprintf("%s is set, but HorizontalRunnerAutoscaler %s has no scaleUpTriggers[].githubEvent.workflowJob "+
				"trigger: lost jobs are found through workflow_job deliveries, which only such a trigger gets, so none is re-run; "+
				"add %s to it, and a GitHub webhook that sends workflow_job events",
				v1alpha1.RerunLostJobsAnnotation, strings.Join(scaling, ", "), addWorkflowJobTrigger)
		}
		return c, false, !(ours && cur.Status == c.Status && cur.Message == c.Message)
	case ours && wanted:
		c.Status, c.Reason = metav1.ConditionTrue, activities.RerunWorkflowJobTrigger
		c.Message = "HorizontalRunnerAutoscaler " + trigger + " has a workflowJob trigger: lost jobs are re-run"
		if trigger == "" {
			c.Message = "the listener of runner scale set " + set.Name + " reports its completed jobs: lost jobs are re-run"
		}
		return c, false, true
	case ours:
		return c, true, true
	}
	return c, false, false
}

// hrasOf names the HRAs among hras that scale the pool kind/name, and the first
// of them with a workflowJob trigger ("" when none has one). HRAs being deleted
// do not count.
func hrasOf(kind, name string, hras []*unstructured.Unstructured) (scaling []string, trigger string) {
	for _, u := range hras {
		var hra v1alpha1.HorizontalRunnerAutoscaler
		if u.GetDeletionTimestamp() != nil || runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra) != nil ||
			hra.Spec.TargetKind() != kind || hra.Spec.ScaleTargetRef.Name != name {
			continue
		}
		scaling = append(scaling, hra.Name)
		if _, ok := hra.Spec.WorkflowJobTrigger(); ok && trigger == "" {
			trigger = hra.Name
		}
	}
	return scaling, trigger
}

// refreshRerunReadiness keeps the RerunLostJobs condition of a pool in step
// with its annotation and the HRAs that scale it. obj is what an informer
// handed over: a RunnerDeployment or RunnerSet (added, updated), or an HRA
// (added, updated, deleted: its target is looked at). It reads only the caches
// unless the condition has to change; then it reads the pool and its
// namespace's HRAs from the API server (a cache still filling at start must
// not report a missing HRA), and writes the condition with the pool's
// resourceVersion, so a concurrent status write is not lost.
func (w *ResourceWatcher) refreshRerunReadiness(ctx context.Context, kind string, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if kind == kindHRA {
		if kind, u = w.cachedTarget(u); u == nil {
			return // the pool's own events look at it once it is there
		}
	}
	if (kind != v1alpha1.KindRunnerDeployment && kind != v1alpha1.KindRunnerSet) || u.GetDeletionTimestamp() != nil {
		return
	}
	if _, _, change := rerunReadiness(kind, u, w.cachedHRAs(u.GetNamespace())); !change {
		return
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return w.writeRerunReadiness(ctx, kind, u.GetNamespace(), u.GetName()) })
	if err != nil {
		w.Log.Warn("cannot write the RerunLostJobs condition", "pool", u.GetNamespace()+"/"+u.GetName(), "error", err)
	}
}

// writeRerunReadiness reads the pool and its namespace's HRAs afresh, writes
// the condition they call for, and records a Warning event when it turns to
// NoWorkflowJobTrigger (or its message changes).
func (w *ResourceWatcher) writeRerunReadiness(ctx context.Context, kind, namespace, name string) error {
	pools := w.Dynamic.Resource(activities.PoolResource(kind)).Namespace(namespace)
	u, err := pools.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s %s/%s: %w", kind, namespace, name, err)
	}
	list, err := w.Dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the HRAs of namespace %s: %w", namespace, err)
	}
	hras := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		hras = append(hras, &list.Items[i])
	}
	c, remove, change := rerunReadiness(kind, u, hras)
	if !change || u.GetDeletionTimestamp() != nil {
		return nil
	}
	conds, err := withoutCondition(u, activities.RerunLostJobsCondition)
	if !remove {
		conds, change, err = activities.WithCondition(u, c, false)
	}
	if err != nil {
		return fmt.Errorf("condition %s: %w", activities.RerunLostJobsCondition, err)
	}
	if !change {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": u.GetResourceVersion()},
		"status":   map[string]any{"conditions": conds},
	})
	if err != nil {
		return fmt.Errorf("condition %s: %w", activities.RerunLostJobsCondition, err)
	}
	if _, err := pools.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("condition %s on %s %s/%s: %w", activities.RerunLostJobsCondition, kind, namespace, name, err)
	}
	if !remove && c.Status == metav1.ConditionFalse {
		on := corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: kind, Name: name, Namespace: namespace, UID: u.GetUID()}
		if err := activities.RecordEvent(ctx, w.Kube, on, corev1.EventTypeWarning, c.Reason, c.Message); err != nil {
			w.Log.Warn("cannot record the event", "pool", namespace+"/"+name, "error", err)
		}
	}
	return nil
}

// withoutCondition is u's status conditions without the one of this type.
func withoutCondition(u *unstructured.Unstructured, conditionType string) ([]any, error) {
	have, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return nil, fmt.Errorf("status.conditions: %w", err)
	}
	kept := make([]any, 0, len(have))
	for _, c := range have {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			continue
		}
		kept = append(kept, c)
	}
	return kept, nil
}

// cachedHRAs are the HRAs of a namespace in the cache (none without one).
func (w *ResourceWatcher) cachedHRAs(namespace string) []*unstructured.Unstructured {
	if w.hras == nil {
		return nil
	}
	objs, err := w.hras.ByNamespace(namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// cachedTarget is the pool an HRA scales, from the cache (nil when it is not
// there).
func (w *ResourceWatcher) cachedTarget(u *unstructured.Unstructured) (string, *unstructured.Unstructured) {
	var hra v1alpha1.HorizontalRunnerAutoscaler
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra) != nil {
		return "", nil
	}
	kind, lister := hra.Spec.TargetKind(), w.rds
	if kind == v1alpha1.KindRunnerSet {
		lister = w.rss
	}
	if lister == nil {
		return kind, nil
	}
	obj, err := lister.ByNamespace(u.GetNamespace()).Get(hra.Spec.ScaleTargetRef.Name)
	if err != nil {
		return kind, nil
	}
	pool, _ := obj.(*unstructured.Unstructured)
	return kind, pool
}
