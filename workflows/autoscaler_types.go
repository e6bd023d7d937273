package workflows

import (
	"time"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

// AutoscalerSpec is a HorizontalRunnerAutoscaler with what the autoscaler needs to
// know of its target. The watcher and the webhook server build it.
type AutoscalerSpec struct {
	Namespace, Name string
	Generation      int64
	TargetKind      string
	TargetName      string
	Min, Max        int
	ScaleDownDelay  time.Duration
	// TriggerDuration is how long a webhook reservation lives (10m by default).
	TriggerDuration time.Duration
	Metrics         []v1alpha1.MetricSpec          `json:",omitempty"`
	Overrides       []v1alpha1.ScheduledOverride   `json:",omitempty"`
	Capacity        []v1alpha1.CapacityReservation `json:",omitempty"`
	Scope           github.Scope
	TargetLabels    []string `json:",omitempty"`
	// Repositories (owner/name) whose queued jobs the metrics and the missed-webhook
	// reconcile list.
	Repositories []string `json:",omitempty"`
	// BatchWindow collects job events before a decision (0: decide at once; the
	// deliveries that arrive while a decision is in flight are still decided
	// together, because a workflow task takes every buffered signal).
	// SyncPeriod paces pull metrics (1m); ReconcilePeriod paces the
	// missed-webhook safety net (5m, 0 disables).
	BatchWindow     time.Duration
	SyncPeriod      time.Duration
	ReconcilePeriod time.Duration
}

// AutoscalerInput starts or continues an autoscaler workflow.
type AutoscalerInput struct {
	Spec  AutoscalerSpec
	State *AutoscalerState `json:",omitempty"`
}

// AutoscalerState is what the `state` query returns and continue-as-new carries.
type AutoscalerState struct {
	Spec         AutoscalerSpec
	Reservations Reservations
	// Pending job events wait for the batch window to close.
	Pending     []JobEvent `json:",omitempty"`
	LastApplied time.Time
	Desired     *int `json:",omitempty"`
	// LastScaleOut starts the scale-down delay (status lastSuccessfulScaleOutTime).
	LastScaleOut time.Time
	Suggested    *int        `json:",omitempty"`
	Force        *ForceScale `json:",omitempty"`
	// Sent is the last scale request the pool accepted.
	Sent        *ScaleRequest `json:",omitempty"`
	NextMetrics time.Time
	NextSync    time.Time
	Status      HRAStatus
	Deleting    bool `json:",omitempty"`
}

// HRAStatus is written back to the HorizontalRunnerAutoscaler's status.
type HRAStatus struct {
	DesiredReplicas            *int       `json:"desiredReplicas,omitempty"`
	LastSuccessfulScaleOutTime *time.Time `json:"lastSuccessfulScaleOutTime,omitempty"`
	ScheduledOverridesSummary  *string    `json:"scheduledOverridesSummary,omitempty"`
}

func (s AutoscalerSpec) withDefaults() AutoscalerSpec {
	if s.TriggerDuration <= 0 {
		s.TriggerDuration = v1alpha1.DefaultScaleUpTriggerDuration
	}
	s.BatchWindow = max(s.BatchWindow, 0)
	if s.SyncPeriod <= 0 {
		s.SyncPeriod = time.Minute
	}
	return s
}
