package workflows

import (
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
)

// AutoscalerInput starts or continues an autoscaler workflow.
type AutoscalerInput struct {
	Spec  contract.AutoscalerSpec
	State *AutoscalerState `json:",omitempty"`
}

// AutoscalerState is what the `state` query returns and continue-as-new carries.
type AutoscalerState struct {
	Spec         contract.AutoscalerSpec
	Reservations Reservations
	// Spilled are the queued jobs passed on to the next autoscaler that matched
	// them, by job ID; Outbox the job events not yet sent there.
	Spilled map[int64]SpilledJob `json:",omitempty"`
	Outbox  []Forward            `json:",omitempty"`
	// Pending job events wait for the batch window to close.
	Pending     []contract.JobEvent `json:",omitempty"`
	LastApplied time.Time
	Desired     *int `json:",omitempty"`
	// LastScaleOut starts the scale-down delay (status lastSuccessfulScaleOutTime).
	LastScaleOut time.Time
	Suggested    *int        `json:",omitempty"`
	Force        *ForceScale `json:",omitempty"`
	// Since is when the autoscaler first ran; a job queued before it was
	// reserved by whatever scaled the pool then (ARC).
	Since time.Time `json:",omitzero"`
	// ReleasedCapacity counts, per capacityReservations entry (capacityKey),
	// the replicas completions of such jobs released, as ARC would have.
	ReleasedCapacity map[string]int `json:",omitempty"`
	// Finished are the runners whose jobs completed since the last scale
	// request, for the next one (ScaleRequest.Finished); at most maxFinished.
	Finished []string `json:",omitempty"`
	// Failed are the jobs that completed failed or cancelled since the last
	// scale request (ScaleRequest.Failed); at most maxFinished.
	Failed []FailedJob `json:",omitempty"`
	// Running are the runners whose jobs started since the last scale request
	// (in_progress deliveries), for the next one (ScaleRequest.Running); at
	// most maxFinished. StartsHeard: an in_progress delivery has come, so the
	// webhook passes them.
	Running     []string `json:",omitempty"`
	StartsHeard bool     `json:",omitempty"`
	// Sent is the last scale request the pool accepted.
	Sent        *ScaleRequest `json:",omitempty"`
	NextMetrics time.Time
	NextSync    time.Time
	Status      HRAStatus
	Deleting    bool `json:",omitempty"`
	// Warm is arcflow.dev/idle-runners: auto's estimate and choice.
	Warm AutoscalerWarm `json:",omitzero"`
	// HandedBack are the jobs a drain's hold handed back to ARC as entries
	// of the HRA's capacityReservations, by job ID, with the expiry written
	// (handback.go).
	HandedBack map[int64]time.Time `json:",omitempty"`
	// ScaleSet is the demand of the pool's runner scale set, from its
	// listener; set, it stands for the reservations (autoscaler_scaleset.go).
	ScaleSet *ScaleSetDemand `json:",omitempty"`
}

// ScaleSetDemand is the last level a scale set's listener sent.
type ScaleSetDemand struct {
	ScaleSetID int64
	MessageID  int64 `json:",omitempty"`
	// Assigned is the service's totalAssignedJobs: jobs waiting and running.
	Assigned int
	At       time.Time
}

// HRAStatus is written back to the HorizontalRunnerAutoscaler's status.
type HRAStatus struct {
	DesiredReplicas            *int       `json:"desiredReplicas,omitempty"`
	LastSuccessfulScaleOutTime *time.Time `json:"lastSuccessfulScaleOutTime,omitempty"`
	ScheduledOverridesSummary  *string    `json:"scheduledOverridesSummary,omitempty"`
}
