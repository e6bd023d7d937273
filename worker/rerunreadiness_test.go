package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// rerunPool is a RunnerDeployment with the annotation value (none when "")
// and the RerunLostJobs condition of reason (none when "").
func rerunPool(annotation, reason string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindRunnerDeployment,
		"metadata": map[string]any{"name": "spot", "namespace": "ci", "generation": int64(2)},
	}}
	if annotation != "" {
		u.SetAnnotations(map[string]string{v1alpha1.RerunLostJobsAnnotation: annotation})
	}
	if reason != "" {
		status := map[string]bool{activities.RerunWorkflowJobTrigger: true, "Rerunning": true}[reason]
		c := map[string]any{"type": activities.RerunLostJobsCondition, "status": map[bool]string{true: "True", false: "False"}[status], "reason": reason, "message": "m"}
		_ = unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "ok"}, c,
		}, "status", "conditions")
	}
	return u
}

// rerunHRA is an HRA named name that scales the RunnerDeployment target, with
// a workflowJob trigger when trigger.
func rerunHRA(name, target string, trigger bool) *unstructured.Unstructured {
	spec := map[string]any{"scaleTargetRef": map[string]any{"name": target}, "maxReplicas": int64(5)}
	if trigger {
		spec["scaleUpTriggers"] = []any{map[string]any{"githubEvent": map[string]any{"workflowJob": map[string]any{}}, "duration": "30m"}}
	} else {
		spec["metrics"] = []any{map[string]any{"type": "PercentageRunnersBusy"}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": kindHRA,
		"metadata": map[string]any{"name": name, "namespace": "ci"}, "spec": spec,
	}}
}

// The condition asks for a workflowJob trigger on an annotated pool without
// one, names the HRA that lacks it, turns True when it comes, goes with the
// annotation, and leaves the re-run workflows' reasons alone while a trigger
// is there.
func TestRerunReadinessAsksForAWorkflowJobTrigger(t *testing.T) {
	rd := v1alpha1.KindRunnerDeployment
	_, _, change := rerunReadiness(rd, rerunPool("", ""), nil)
	require.False(t, change, "a pool without the annotation gets no condition")
	_, _, change = rerunReadiness(rd, rerunPool("false", ""), nil)
	require.False(t, change)
	_, _, change = rerunReadiness(rd, rerunPool("twice", ""), nil)
	require.False(t, change, "an annotation that does not parse is the Accepted condition's to report")

	c, remove, change := rerunReadiness(rd, rerunPool("true", ""), nil)
	require.True(t, change)
	require.False(t, remove)
	require.Equal(t, metav1.ConditionFalse, c.Status)
	require.Equal(t, "NoWorkflowJobTrigger", c.Reason)
	require.Equal(t, int64(2), c.ObservedGeneration)
	require.Contains(t, c.Message, "no HorizontalRunnerAutoscaler scales this RunnerDeployment")
	require.Contains(t, c.Message, "{kind: RunnerDeployment, name: spot}")
	require.Contains(t, c.Message, "githubEvent: {workflowJob: {}}")

	others := []*unstructured.Unstructured{rerunHRA("other", "other-pool", true), rerunHRA("busy", "spot", false)}
	rs := rerunHRA("runnerset", "spot", true)
	_ = unstructured.SetNestedField(rs.Object, v1alpha1.KindRunnerSet, "spec", "scaleTargetRef", "kind")
	deleting := rerunHRA("deleting", "spot", true)
	deleting.SetDeletionTimestamp(&metav1.Time{})
	c, _, change = rerunReadiness(rd, rerunPool("2", ""), append(others, rs, deleting))
	require.True(t, change, "an HRA of another pool, of a RunnerSet of the same name or being deleted does not count")
	require.Contains(t, c.Message, "HorizontalRunnerAutoscaler busy has no scaleUpTriggers[].githubEvent.workflowJob trigger")

	written := rerunPool("2", "NoWorkflowJobTrigger")
	require.NoError(t, unstructured.SetNestedSlice(written.Object, []any{map[string]any{
		"type": activities.RerunLostJobsCondition, "status": "False", "reason": "NoWorkflowJobTrigger", "message": c.Message,
	}}, "status", "conditions"))
	_, _, change = rerunReadiness(rd, written, others)
	require.False(t, change, "written once")

	withTrigger := append(others, rerunHRA("spot", "spot", true))
	c, remove, change = rerunReadiness(rd, written, withTrigger)
	require.True(t, change)
	require.False(t, remove)
	require.Equal(t, metav1.ConditionTrue, c.Status)
	require.Equal(t, "WorkflowJobTrigger", c.Reason)
	require.Contains(t, c.Message, "HorizontalRunnerAutoscaler spot has a workflowJob trigger")
	_, _, change = rerunReadiness(rd, rerunPool("2", ""), withTrigger)
	require.False(t, change, "a pool ready from the start gets no condition")

	_, remove, change = rerunReadiness(rd, rerunPool("", "NoWorkflowJobTrigger"), nil)
	require.True(t, change)
	require.True(t, remove, "the annotation went: so does the condition")
	_, _, change = rerunReadiness(rd, rerunPool("", "NoActionsWrite"), nil)
	require.False(t, change, "another reason without the annotation is left alone")

	for _, reason := range []string{"NoActionsWrite", "Rerunning", "WorkflowJobTrigger"} {
		_, _, change = rerunReadiness(rd, rerunPool("true", reason), withTrigger)
		require.False(t, change, "%s stays while the trigger is there", reason)
		c, _, change = rerunReadiness(rd, rerunPool("true", reason), others)
		require.True(t, change, "%s gives way once the trigger goes", reason)
		require.Equal(t, "NoWorkflowJobTrigger", c.Reason)
	}
}

// A runner scale set's pool needs no workflowJob trigger: its listener sends
// the completions. It still needs an HRA, which is what scales such a pool.
func TestRerunReadinessOfAScaleSetPool(t *testing.T) {
	rd := v1alpha1.KindRunnerDeployment
	setPool := func(reason string) *unstructured.Unstructured {
		u := rerunPool("true", reason)
		u.SetAnnotations(map[string]string{v1alpha1.RerunLostJobsAnnotation: "true", v1alpha1.ScaleSetAnnotation: "linux-set"})
		return u
	}
	hras := []*unstructured.Unstructured{rerunHRA("spot", "spot", false)}
	_, _, change := rerunReadiness(rd, setPool(""), hras)
	require.False(t, change, "ready from the start: no condition")

	c, remove, change := rerunReadiness(rd, setPool("NoWorkflowJobTrigger"), hras)
	require.True(t, change)
	require.False(t, remove)
	require.Equal(t, metav1.ConditionTrue, c.Status)
	require.Equal(t, "the listener of runner scale set linux-set reports its completed jobs: lost jobs are re-run", c.Message)

	c, _, change = rerunReadiness(rd, setPool(""), nil)
	require.True(t, change, "no HRA scales it")
	require.Equal(t, "NoWorkflowJobTrigger", c.Reason)
	require.Contains(t, c.Message, "the listener of runner scale set linux-set reports completed jobs to the HRA that scales the pool")
	require.NotContains(t, c.Message, "webhook", "a scale set's pool needs none")
}

// indexed is a lister over objs, as an informer's cache.
func indexed(gr schema.GroupResource, objs ...*unstructured.Unstructured) (cache.GenericLister, cache.Indexer) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return cache.NewGenericLister(idx, gr), idx
}

// The watcher writes the condition, with one Warning event, on an annotated
// pool whose HRA has no workflowJob trigger; an HRA's change looks at its
// pool again; a cache still filling at start does not make it report a
// missing HRA that the API server has.
func TestRerunReadinessConditionOnThePool(t *testing.T) {
	pool, hra := rerunPool("true", ""), rerunHRA("spot", "spot", false)
	require.NoError(t, unstructured.SetNestedSlice(pool.Object, []any{
		map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "ok"},
	}, "status", "conditions"))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.RunnerDeploymentResource:           "RunnerDeploymentList",
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
	}, pool, hra)
	kube := kubeWithNamedEvents()
	w := &ResourceWatcher{Dynamic: dyn, Kube: kube, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var rdIndex, hraIndex cache.Indexer
	w.rds, rdIndex = indexed(v1alpha1.RunnerDeploymentResource.GroupResource())
	w.hras, hraIndex = indexed(v1alpha1.HorizontalRunnerAutoscalerResource.GroupResource())
	ctx := context.Background()
	current := func() *unstructured.Unstructured {
		u, err := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci").Get(ctx, "spot", metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	events := func() []corev1.Event {
		list, err := kube.CoreV1().Events("ci").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return list.Items
	}
	reason := func() string { c, _ := conditionOf(current(), activities.RerunLostJobsCondition); return c.Reason }

	// At start the pool arrives before its HRA is in the cache: the API
	// server's HRA, with the trigger, is what counts.
	ready := rerunHRA("spot", "spot", true)
	_, err := dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Update(ctx, ready, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.refreshRerunReadiness(ctx, v1alpha1.KindRunnerDeployment, current())
	require.Empty(t, reason(), "nothing to say")
	require.Empty(t, events())

	// The trigger goes.
	_, err = dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Update(ctx, hra, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, hraIndex.Add(hra))
	require.NoError(t, rdIndex.Add(current()))
	w.refreshRerunReadiness(ctx, kindHRA, hra)
	require.Equal(t, "NoWorkflowJobTrigger", reason())
	require.Equal(t, "False", conditionStatus(current(), activities.RerunLostJobsCondition))
	require.Len(t, events(), 1)
	require.Equal(t, corev1.EventTypeWarning, events()[0].Type)
	require.Equal(t, "NoWorkflowJobTrigger", events()[0].Reason)
	require.Equal(t, "spot", events()[0].InvolvedObject.Name)
	require.Equal(t, v1alpha1.KindRunnerDeployment, events()[0].InvolvedObject.Kind)
	w.refreshRerunReadiness(ctx, v1alpha1.KindRunnerDeployment, current())
	w.refreshRerunReadiness(ctx, kindHRA, hra)
	require.Len(t, events(), 1, "one event, however often it is looked at")

	// The trigger is added back: the HRA's update turns the condition True.
	_, err = dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Update(ctx, ready, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, hraIndex.Update(ready))
	require.NoError(t, rdIndex.Update(current()))
	w.refreshRerunReadiness(ctx, kindHRA, ready)
	require.Equal(t, "WorkflowJobTrigger", reason())
	require.Equal(t, "True", conditionStatus(current(), "RerunLostJobs"))
	require.Equal(t, "True", conditionStatus(current(), "Accepted"), "other conditions are kept")
	require.Len(t, events(), 1)

	// The HRA is deleted: the pool says so again.
	require.NoError(t, dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Delete(ctx, "spot", metav1.DeleteOptions{}))
	require.NoError(t, hraIndex.Delete(ready))
	w.refreshRerunReadiness(ctx, kindHRA, cache.DeletedFinalStateUnknown{Key: "ci/spot", Obj: ready})
	require.Equal(t, "NoWorkflowJobTrigger", reason())
	c, _ := conditionOf(current(), activities.RerunLostJobsCondition)
	require.Contains(t, c.Message, "no HorizontalRunnerAutoscaler scales this RunnerDeployment")
	require.Len(t, events(), 2)

	// The annotation goes: so does the condition.
	unannotated := current()
	unannotated.SetAnnotations(nil)
	_, err = dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci").Update(ctx, unannotated, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.refreshRerunReadiness(ctx, v1alpha1.KindRunnerDeployment, current())
	_, has := conditionOf(current(), activities.RerunLostJobsCondition)
	require.False(t, has)
	require.Len(t, events(), 2)
}
