package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scale target kinds.
const (
	KindRunnerDeployment = "RunnerDeployment"
	KindRunnerSet        = "RunnerSet"
)

// Metric types, as in ARC.
const (
	MetricTotalNumberOfQueuedAndInProgressWorkflowRuns = "TotalNumberOfQueuedAndInProgressWorkflowRuns"
	MetricPercentageRunnersBusy                        = "PercentageRunnersBusy"
)

// HorizontalRunnerAutoscalerSpec says how many runners a RunnerDeployment or
// RunnerSet should have: minReplicas plus one per queued workflow job, or what the
// metrics suggest, between minReplicas and maxReplicas.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not be greater than maxReplicas"
type HorizontalRunnerAutoscalerSpec struct {
	// ScaleTargetRef names the RunnerDeployment or RunnerSet to scale, in the same
	// namespace.
	ScaleTargetRef ScaleTargetRef `json:"scaleTargetRef,omitempty"`

	// MinReplicas is the fewest runners. Required.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReplicas *int `json:"minReplicas,omitempty"`
	// MaxReplicas is the most runners. Required.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxReplicas *int `json:"maxReplicas,omitempty"`

	// ScaleDownDelaySecondsAfterScaleUp holds the desired count for this long after a
	// scale-out before it may drop. Default 10 minutes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScaleDownDelaySecondsAfterScaleUp *int `json:"scaleDownDelaySecondsAfterScaleOut,omitempty"`

	// +kubebuilder:validation:MaxItems=2
	// +optional
	Metrics []MetricSpec `json:"metrics,omitempty"`

	// +optional
	ScaleUpTriggers []ScaleUpTrigger `json:"scaleUpTriggers,omitempty"`

	// CapacityReservations reserve one replica each between their effective and
	// expiration times. arcflow keeps webhook reservations in the autoscaler
	// workflow; entries written here by hand are honoured too.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	CapacityReservations []CapacityReservation `json:"capacityReservations,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// ScheduledOverrides override minReplicas during their time windows. The first
	// active entry wins.
	// +optional
	ScheduledOverrides []ScheduledOverride `json:"scheduledOverrides,omitempty"`

	// +optional
	GitHubAPICredentialsFrom *GitHubAPICredentialsFrom `json:"githubAPICredentialsFrom,omitempty"`
}

// ScaleTargetRef names a RunnerDeployment or RunnerSet.
type ScaleTargetRef struct {
	// Kind is RunnerDeployment (the default when empty) or RunnerSet.
	// +kubebuilder:validation:Enum="";RunnerDeployment;RunnerSet
	// +optional
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

// MetricSpec is a pull metric. Thresholds and factors are decimal strings, as in ARC.
type MetricSpec struct {
	// +kubebuilder:validation:Enum=TotalNumberOfQueuedAndInProgressWorkflowRuns;PercentageRunnersBusy
	Type string `json:"type,omitempty"`
	// RepositoryNames lists the repositories (the name part of owner/name) that
	// TotalNumberOfQueuedAndInProgressWorkflowRuns counts for an organization's runners.
	// +optional
	RepositoryNames []string `json:"repositoryNames,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	ScaleUpThreshold string `json:"scaleUpThreshold,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	ScaleDownThreshold string `json:"scaleDownThreshold,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	ScaleUpFactor string `json:"scaleUpFactor,omitempty"`
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	ScaleDownFactor string `json:"scaleDownFactor,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScaleUpAdjustment int `json:"scaleUpAdjustment,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	ScaleDownAdjustment int `json:"scaleDownAdjustment,omitempty"`
}

// ScaleUpTrigger scales on GitHub webhook events. Only githubEvent.workflowJob has
// an effect, as in ARC since v0.27.
type ScaleUpTrigger struct {
	// +optional
	GitHubEvent *GitHubEventScaleUpTriggerSpec `json:"githubEvent,omitempty"`
	// Amount is ignored for workflowJob: each job reserves one runner.
	// +optional
	Amount int `json:"amount,omitempty"`
	// Duration is how long a reservation lives unless its job completes first.
	// Default 10 minutes.
	// +optional
	Duration metav1.Duration `json:"duration,omitempty"`
}

// GitHubEventScaleUpTriggerSpec selects the webhook event of a trigger.
type GitHubEventScaleUpTriggerSpec struct {
	// +optional
	CheckRun *CheckRunSpec `json:"checkRun,omitempty"`
	// +optional
	PullRequest *PullRequestSpec `json:"pullRequest,omitempty"`
	// +optional
	Push *PushSpec `json:"push,omitempty"`
	// +optional
	WorkflowJob *WorkflowJobSpec `json:"workflowJob,omitempty"`
}

// CheckRunSpec is accepted for compatibility; it has no effect (as in ARC v0.27).
type CheckRunSpec struct {
	Types        []string `json:"types,omitempty"`
	Status       string   `json:"status,omitempty"`
	Names        []string `json:"names,omitempty"`
	Repositories []string `json:"repositories,omitempty"`
}

// PullRequestSpec is accepted for compatibility; it has no effect (as in ARC v0.27).
type PullRequestSpec struct {
	Types    []string `json:"types,omitempty"`
	Branches []string `json:"branches,omitempty"`
}

// PushSpec is accepted for compatibility; it has no effect (as in ARC v0.27).
type PushSpec struct{}

// WorkflowJobSpec enables scaling on workflow_job events.
type WorkflowJobSpec struct{}

// CapacityReservation reserves replicas for a time window.
type CapacityReservation struct {
	Name           string      `json:"name,omitempty"`
	EffectiveTime  metav1.Time `json:"effectiveTime,omitempty"`
	ExpirationTime metav1.Time `json:"expirationTime,omitempty"`
	// +kubebuilder:validation:Minimum=0
	Replicas int `json:"replicas,omitempty"`
}

// ScheduledOverride sets minReplicas during a window, once or recurring.
type ScheduledOverride struct {
	StartTime metav1.Time `json:"startTime"`
	EndTime   metav1.Time `json:"endTime"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +nullable
	MinReplicas *int `json:"minReplicas,omitempty"`
	// +optional
	RecurrenceRule RecurrenceRule `json:"recurrenceRule,omitempty"`
}

// RecurrenceRule repeats a scheduled override.
type RecurrenceRule struct {
	// +kubebuilder:validation:Enum=Daily;Weekly;Monthly;Yearly
	// +optional
	Frequency string `json:"frequency,omitempty"`
	// UntilTime ends the recurrence; zero means forever.
	// +optional
	UntilTime metav1.Time `json:"untilTime,omitempty"`
}

// HorizontalRunnerAutoscalerStatus reports the autoscaler's last decision.
type HorizontalRunnerAutoscalerStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// DesiredReplicas is the last computed replica count.
	// +optional
	DesiredReplicas *int `json:"desiredReplicas,omitempty"`
	// +optional
	// +nullable
	LastSuccessfulScaleOutTime *metav1.Time `json:"lastSuccessfulScaleOutTime,omitempty"`
	// ScheduledOverridesSummary shows the active or next override, e.g. "min=0 time=...".
	// +optional
	ScheduledOverridesSummary *string `json:"scheduledOverridesSummary,omitempty"`
	// Warm is the warm buffer of arcflow.dev/idle-runners: auto (beyond ARC).
	// +optional
	Warm *WarmRunnersStatus `json:"warm,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// HorizontalRunnerAutoscaler scales a RunnerDeployment or RunnerSet. Its decisions
// are made by a Temporal autoscaler workflow with the ID hra/<namespace>/<name>.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hra
// +kubebuilder:printcolumn:JSONPath=".spec.minReplicas",name=Min,type=number
// +kubebuilder:printcolumn:JSONPath=".spec.maxReplicas",name=Max,type=number
// +kubebuilder:printcolumn:JSONPath=".status.desiredReplicas",name=Desired,type=number
// +kubebuilder:printcolumn:JSONPath=".status.warm.runners",name=Warm,type=number
// +kubebuilder:printcolumn:JSONPath=".status.scheduledOverridesSummary",name=Schedule,type=string
// +kubebuilder:printcolumn:JSONPath=".metadata.creationTimestamp",name=Age,type=date
type HorizontalRunnerAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HorizontalRunnerAutoscalerSpec   `json:"spec,omitempty"`
	Status HorizontalRunnerAutoscalerStatus `json:"status,omitempty"`
}

// HorizontalRunnerAutoscalerList is a list of HorizontalRunnerAutoscalers.
//
// +kubebuilder:object:root=true
type HorizontalRunnerAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HorizontalRunnerAutoscaler `json:"items"`
}
