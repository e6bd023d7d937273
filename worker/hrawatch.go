package worker

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// upsertHRA signal-with-starts the autoscaler workflow with the HRA's spec.
// Like upsert, it returns an error only for a failed Temporal call.
func (w *ResourceWatcher) upsertHRA(ctx context.Context, u *unstructured.Unstructured) error {
	var hra v1alpha1.HorizontalRunnerAutoscaler
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra); err != nil {
		w.setConditions(ctx, kindHRA, u, metav1.ConditionFalse, "InvalidSpec", err.Error(), nil)
		return nil
	}
	spec, err := w.autoscalerSpec(&hra)
	if err != nil {
		w.Log.Warn("autoscaler not started", "hra", hra.Namespace+"/"+hra.Name, "error", err)
		w.setConditions(ctx, kindHRA, u, metav1.ConditionFalse, "InvalidSpec", err.Error(), nil)
		return nil
	}
	if problem := w.credentialsProblem(ctx, spec.Scope.Credentials); problem != nil {
		w.Log.Warn("the autoscaler's GitHub credentials are unusable", "hra", hra.Namespace+"/"+hra.Name, "error", problem)
		w.setConditions(ctx, kindHRA, u, metav1.ConditionFalse, "InvalidCredentials", problem.Error(), nil)
		w.queue.AddAfter(keyOf(kindHRA, u), credentialsRecheck)
		return nil
	}
	release, blocked := w.arcHold(ctx, kindHRA, u, hra.UnsupportedFields())
	defer release()
	if blocked {
		return nil
	}
	if err := w.signalAutoscaler(ctx, &hra, spec); err != nil {
		return w.temporalFailed(ctx, kindHRA, u, hra.UnsupportedFields(), err)
	}
	if err := w.refreshScaleSetOf(ctx, &hra); err != nil {
		return w.temporalFailed(ctx, kindHRA, u, hra.UnsupportedFields(), err)
	}
	w.setConditions(ctx, kindHRA, u, metav1.ConditionTrue, "Accepted",
		"the autoscaler workflow "+contract.AutoscalerWorkflowID(hra.Namespace, hra.Name)+" runs this resource", hra.UnsupportedFields())
	return nil
}

// autoscalerSpec resolves the HRA's scale target from the caches and builds
// the autoscaler's spec.
func (w *ResourceWatcher) autoscalerSpec(hra *v1alpha1.HorizontalRunnerAutoscaler) (contract.AutoscalerSpec, error) {
	target, err := hraspec.ResolveTarget(hra, w.rds, w.rss)
	if err != nil {
		return contract.AutoscalerSpec{}, err
	}
	return hraspec.Of(hra, target, w.Autoscaling)
}

func (w *ResourceWatcher) signalAutoscaler(ctx context.Context, hra *v1alpha1.HorizontalRunnerAutoscaler, spec contract.AutoscalerSpec) error {
	id := contract.AutoscalerWorkflowID(hra.Namespace, hra.Name)
	_, err := w.Temporal.SignalWithStartWorkflow(ctx, id, contract.SignalSpec, spec, client.StartWorkflowOptions{
		ID: id, TaskQueue: contract.ControlTaskQueue, Memo: contract.AutoscalerMemo(hra.Namespace, hra.Name, spec.TargetKind, spec.TargetName),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.SearchAttrKind.ValueSet("autoscaler"),
			contract.SearchAttrPool.ValueSet(hra.Namespace+"/"+spec.TargetName),
			contract.SearchAttrScope.ValueSet(spec.Scope.String()),
		),
	}, workflows.AutoscalerWorkflow, workflows.AutoscalerInput{Spec: spec})
	if err != nil {
		return fmt.Errorf("signal the autoscaler workflow %s: %w", id, err)
	}
	return nil
}

// refreshHRAsOf asks for a sync of the HRAs that scale a changed target.
func (w *ResourceWatcher) refreshHRAsOf(kind, namespace, name string) {
	objs, err := w.hras.ByNamespace(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, obj := range objs {
		u := obj.(*unstructured.Unstructured)
		var hra v1alpha1.HorizontalRunnerAutoscaler
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra) == nil &&
			hra.Spec.TargetKind() == kind && hra.Spec.ScaleTargetRef.Name == name {
			w.enqueue(kindHRA, u)
		}
	}
}
