package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunnerSetSpec is a runner configuration plus a StatefulSet spec, inline, as in ARC.
// Each runner becomes a one-replica StatefulSet built from it. Its
// volumeClaimTemplates become volume slots: claims that outlive the runner and
// are mounted by the next runner at that slot, so caches stay warm.
//
// +kubebuilder:validation:XValidation:rule="[has(self.enterprise) && size(self.enterprise) > 0, has(self.organization) && size(self.organization) > 0, has(self.repository) && size(self.repository) > 0].filter(x, x).size() == 1",message="exactly one of enterprise, organization and repository must be set"
type RunnerSetSpec struct {
	RunnerConfig `json:",inline"`

	// EffectiveTime is written by the autoscaler; see RunnerDeploymentSpec.
	// +optional
	// +nullable
	EffectiveTime *metav1.Time `json:"effectiveTime,omitempty"`

	ServiceAccountName      string                   `json:"serviceAccountName,omitempty"`
	WorkVolumeClaimTemplate *WorkVolumeClaimTemplate `json:"workVolumeClaimTemplate,omitempty"`

	appsv1.StatefulSetSpec `json:",inline"`
}

// RunnerSetStatus reports the set's runners.
type RunnerSetStatus struct {
	// AvailableReplicas is the number of runners whose pod is Running and Ready.
	// +optional
	CurrentReplicas *int `json:"availableReplicas,omitempty"`
	// ReadyReplicas is the number of runners registered with GitHub.
	// +optional
	ReadyReplicas *int `json:"readyReplicas,omitempty"`
	// UpdatedReplicas is the number of runners built from the current template.
	// +optional
	UpdatedReplicas *int `json:"updatedReplicas,omitempty"`
	// DesiredReplicas is the number of runners the set is converging to.
	// +optional
	DesiredReplicas *int `json:"desiredReplicas,omitempty"`
	// Replicas is the number of runners that exist.
	// +optional
	Replicas *int `json:"replicas,omitempty"`
	// VolumesInUse counts the volume slots (a claim per volumeClaimTemplate)
	// that runners hold; VolumesFree those kept for the next runners.
	// +optional
	VolumesInUse *int `json:"volumesInUse,omitempty"`
	// +optional
	VolumesFree          *int `json:"volumesFree,omitempty"`
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

// RunnerSet is a pool of runners, each a one-replica StatefulSet.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:JSONPath=".status.desiredReplicas",name=Desired,type=number
// +kubebuilder:printcolumn:JSONPath=".status.replicas",name=Current,type=number
// +kubebuilder:printcolumn:JSONPath=".status.updatedReplicas",name=Up-To-Date,type=number
// +kubebuilder:printcolumn:JSONPath=".status.availableReplicas",name=Available,type=number
// +kubebuilder:printcolumn:JSONPath=".status.volumesInUse",name=Volumes-In-Use,type=number
// +kubebuilder:printcolumn:JSONPath=".status.volumesFree",name=Volumes-Free,type=number
// +kubebuilder:printcolumn:JSONPath=".metadata.creationTimestamp",name=Age,type=date
type RunnerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RunnerSetSpec   `json:"spec,omitempty"`
	Status RunnerSetStatus `json:"status,omitempty"`
}

// RunnerSetList is a list of RunnerSets.
//
// +kubebuilder:object:root=true
type RunnerSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RunnerSet `json:"items"`
}
