package contract

import (
	"time"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
)

// AutoscalerWorkflowType is the autoscaler workflow's registered name, for a
// process that starts it without linking the workflow code.
const AutoscalerWorkflowType = "AutoscalerWorkflow"

// AutoscalerSpec is a HorizontalRunnerAutoscaler with what the autoscaler needs to
// know of its target. The watcher and the webhook server build it.
type AutoscalerSpec struct {
	Namespace, Name string
	Generation      int64
	TargetKind      string
	TargetName      string
	Min, Max        int
	// IdleRunners is the idle buffer kept on top of demand, within Max
	// (v1alpha1.IdleRunnersAnnotation; 0 keeps ARC's behaviour).
	IdleRunners    int `json:",omitempty"`
	ScaleDownDelay time.Duration
	// TriggerDuration is how long a webhook reservation lives (10m by default).
	TriggerDuration time.Duration
	Metrics         []v1alpha1.MetricSpec          `json:",omitempty"`
	Overrides       []v1alpha1.ScheduledOverride   `json:",omitempty"`
	Capacity        []v1alpha1.CapacityReservation `json:",omitempty"`
	Scope           registry.Scope
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
	// AutoIdle, when set, sizes the idle buffer from the pool's demand
	// instead (v1alpha1.IdleRunnersAnnotation "auto").
	AutoIdle *AutoIdleRunners `json:",omitempty"`
	// ScaleSet names the runner scale set the target's runners join: its
	// listener's level is the demand, and no missed-webhook reconcile runs.
	ScaleSet string `json:",omitempty"`
}

// AutoscalerStart is the input of an autoscaler's first run, as the webhook
// starts one: the workflow's own input (workflows.AutoscalerInput) without the
// state that only continue-as-new carries, and the same JSON.
type AutoscalerStart struct {
	Spec AutoscalerSpec
}

// WithDefaults fills what the resource left out.
func (s AutoscalerSpec) WithDefaults() AutoscalerSpec {
	if s.TriggerDuration <= 0 {
		s.TriggerDuration = v1alpha1.DefaultScaleUpTriggerDuration
	}
	s.BatchWindow = max(s.BatchWindow, 0)
	if s.SyncPeriod <= 0 {
		s.SyncPeriod = time.Minute
	}
	return s
}
