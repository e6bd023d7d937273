package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version shared with ARC's legacy mode.
var GroupVersion = schema.GroupVersion{Group: "actions.summerwind.dev", Version: "v1alpha1"}

// Resource names, as used by dynamic clients and informers.
var (
	RunnerDeploymentResource           = GroupVersion.WithResource("runnerdeployments")
	RunnerSetResource                  = GroupVersion.WithResource("runnersets")
	HorizontalRunnerAutoscalerResource = GroupVersion.WithResource("horizontalrunnerautoscalers")
)

var (
	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&RunnerDeployment{}, &RunnerDeploymentList{},
		&RunnerSet{}, &RunnerSetList{},
		&HorizontalRunnerAutoscaler{}, &HorizontalRunnerAutoscalerList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
