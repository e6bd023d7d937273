package activities

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RerunLostJobsCondition is the condition type that says whether a pool's lost
// jobs can be re-run: False with reason NoActionsWrite once GitHub refused a
// re-run for lack of permission, True again after a re-run went through. The
// resource watcher keeps it as it is when it writes its own conditions, and
// sets it False with reason RerunNoWorkflowJobTrigger on an annotated pool
// that no HRA with a workflowJob trigger scales (worker/rerunreadiness.go).
const RerunLostJobsCondition = "RerunLostJobs"

// Reasons of the RerunLostJobs condition the resource watcher writes: lost jobs
// are found through workflow_job "completed" deliveries, which name the
// runner, and only an HRA with a scaleUpTriggers[].githubEvent.workflowJob
// trigger gets them for its pool.
const (
	// RerunNoWorkflowJobTrigger: the pool is annotated, and no HRA with a
	// workflowJob trigger scales it (or no HRA at all); the condition is False.
	RerunNoWorkflowJobTrigger = "NoWorkflowJobTrigger"
	// RerunWorkflowJobTrigger: such an HRA came after RerunNoWorkflowJobTrigger;
	// the condition is True.
	RerunWorkflowJobTrigger = "WorkflowJobTrigger"
)

// rerunCondition is the condition an outcome sets; ok is false for outcomes
// that say nothing of the permission.
func rerunCondition(outcome, message string, generation int64) (metav1.Condition, bool) {
	c := metav1.Condition{Type: RerunLostJobsCondition, ObservedGeneration: generation, LastTransitionTime: metav1.Now()}
	switch outcome {
	case RerunNoPermission:
		c.Status, c.Reason = metav1.ConditionFalse, "NoActionsWrite"
		c.Message = "GitHub refused to re-run a lost job: the credentials lack actions: write (" + message + "); lost jobs stay failed until the GitHub App or token gets Actions read and write"
	case RerunDone, RerunAlready:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "Rerunning", "lost jobs are re-run"
	default:
		return c, false
	}
	return c, true
}

// setRerunCondition writes the outcome's condition on the pool's resource
// when it changes what the resource says.
func (k *Kubernetes) setRerunCondition(ctx context.Context, obj *unstructured.Unstructured, in LostJobReport) error {
	want, ok := rerunCondition(in.Outcome, in.Message, obj.GetGeneration())
	if !ok {
		return nil
	}
	resources := k.Dynamic.Resource(PoolResource(in.Pool.Kind)).Namespace(in.Pool.Namespace)
	_, _, err := PatchConditions(ctx, resources, obj, func(obj *unstructured.Unstructured) (any, bool, error) {
		return WithCondition(obj, want, true)
	})
	if err != nil {
		return fmt.Errorf("condition %s on %s %s/%s: %w", RerunLostJobsCondition, in.Pool.Kind, in.Pool.Namespace, in.Pool.Name, err)
	}
	return nil
}
