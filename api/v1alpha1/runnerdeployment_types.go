package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunnerDeploymentSpec is the desired pool of runner pods.
type RunnerDeploymentSpec struct {
	// Replicas is the desired number of runners. Nil means 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int `json:"replicas,omitempty"`

	// EffectiveTime is written by the autoscaler: an ephemeral pool does not replace a
	// finished runner until this time moves past its last creation, or 10 minutes pass.
	// +optional
	// +nullable
	EffectiveTime *metav1.Time `json:"effectiveTime,omitempty"`

	// +optional
	// +nullable
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	Template RunnerTemplate        `json:"template"`
}

// RunnerTemplate is the template of each runner of a RunnerDeployment.
type RunnerTemplate struct {
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RunnerSpec `json:"spec,omitempty"`
}

// RunnerDeploymentStatus reports the pool's runners.
type RunnerDeploymentStatus struct {
	// AvailableReplicas is the number of runners whose pod is Running and Ready.
	// +optional
	AvailableReplicas *int `json:"availableReplicas,omitempty"`
	// ReadyReplicas is the number of runners registered with GitHub.
	// +optional
	ReadyReplicas *int `json:"readyReplicas,omitempty"`
	// UpdatedReplicas is the number of runners built from the current template.
	// +optional
	UpdatedReplicas *int `json:"updatedReplicas,omitempty"`
	// DesiredReplicas is the number of runners the pool is converging to.
	// +optional
	DesiredReplicas *int `json:"desiredReplicas,omitempty"`
	// Replicas is the number of runners that exist.
	// +optional
	Replicas             *int `json:"replicas,omitempty"`
	FailingRunnersStatus `json:",inline"`
	TakenOverStatus      `json:",inline"`
	ScaleSetStatus       `json:",inline"`
	// Warm is the warm buffer of the autoscaler's arcflow.dev/idle-runners:
	// auto, and the idle runner-seconds it cost (beyond ARC).
	// +optional
	Warm *PoolWarmStatus `json:"warm,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RunnerDeployment is a pool of runner pods, kept at a desired size by a Temporal
// pool workflow.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rdeploy
// +kubebuilder:printcolumn:JSONPath=".spec.template.spec.enterprise",name=Enterprise,type=string
// +kubebuilder:printcolumn:JSONPath=".spec.template.spec.organization",name=Organization,type=string
// +kubebuilder:printcolumn:JSONPath=".spec.template.spec.repository",name=Repository,type=string
// +kubebuilder:printcolumn:JSONPath=".spec.template.spec.group",name=Group,type=string
// +kubebuilder:printcolumn:JSONPath=".spec.template.spec.labels",name=Labels,type=string
// +kubebuilder:printcolumn:JSONPath=".status.desiredReplicas",name=Desired,type=number
// +kubebuilder:printcolumn:JSONPath=".status.replicas",name=Current,type=number
// +kubebuilder:printcolumn:JSONPath=".status.updatedReplicas",name=Up-To-Date,type=number
// +kubebuilder:printcolumn:JSONPath=".status.availableReplicas",name=Available,type=number
// +kubebuilder:printcolumn:JSONPath=".metadata.creationTimestamp",name=Age,type=date
type RunnerDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RunnerDeploymentSpec   `json:"spec,omitempty"`
	Status RunnerDeploymentStatus `json:"status,omitempty"`
}

// RunnerDeploymentList is a list of RunnerDeployments.
//
// +kubebuilder:object:root=true
type RunnerDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RunnerDeployment `json:"items"`
}
