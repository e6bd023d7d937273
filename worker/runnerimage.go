package worker

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// runnerImageUnfit is the condition type of a JIT or scale-set pool whose
// runner image cannot start from a JIT configuration.
const runnerImageUnfit = "RunnerImageUnfit"

// runnerImageCondition is RunnerImageUnfit=True while a JIT or scale-set
// pool's runner container is a well-known image left to an entrypoint that
// cannot start its runners (activities.JITImageProblem). A warning, as
// UnsupportedFields is: the pool runs, its runners fail and it backs off, and
// this says why. Read from the resource itself, so every conditions write
// keeps it; gone once the template is mended.
func runnerImageCondition(u *unstructured.Unstructured) (metav1.Condition, bool) {
	spec, ok := jitRunnerSpec(u)
	if !ok {
		return metav1.Condition{}, false
	}
	reason, message := activities.JITImageProblem(activities.UserRunnerContainer(spec))
	if reason == "" {
		return metav1.Condition{}, false
	}
	return metav1.Condition{Type: runnerImageUnfit, Status: metav1.ConditionTrue, Reason: reason, Message: message,
		ObservedGeneration: u.GetGeneration(), LastTransitionTime: metav1.Now()}, true
}

// jitRunnerSpec is the runner template of a pool whose runners start from a
// JIT configuration (arcflow.dev/jit-config or arcflow.dev/scale-set); ok is
// false for other pools, HRAs and specs that do not decode (InvalidSpec says so).
func jitRunnerSpec(u *unstructured.Unstructured) (v1alpha1.RunnerSpec, bool) {
	var spec v1alpha1.RunnerSpec
	ephemeral := true
	switch u.GetKind() {
	case v1alpha1.KindRunnerDeployment:
		var rd v1alpha1.RunnerDeployment
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rd) != nil {
			return spec, false
		}
		spec, ephemeral = rd.Spec.Template.Spec, rd.Spec.Template.Spec.IsEphemeral()
	case v1alpha1.KindRunnerSet:
		var rs v1alpha1.RunnerSet
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &rs) != nil {
			return spec, false
		}
		spec, ephemeral = activities.RunnerSetPodSpec(&rs.Spec), rs.Spec.IsEphemeral()
	default:
		return spec, false
	}
	jit, err := v1alpha1.JITConfig(u.GetAnnotations(), ephemeral)
	_, scaleSet := u.GetAnnotations()[v1alpha1.ScaleSetAnnotation]
	return spec, (jit && err == nil) || scaleSet
}
