package calls

import (
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// PoolFinalizer is on every RunnerDeployment and RunnerSet whose pool arcflow
// runs. Without it, deleting the resource lets the garbage collector delete
// its runner pods at once, busy or not; with it, the resource stays until its
// pool has drained: idle runners removed from GitHub before their pods, busy
// ones done with their jobs (or the grace period over).
const PoolFinalizer = "arcflow.dev/runners"

// PoolResourceRef names a pool's RunnerDeployment or RunnerSet.
type PoolResourceRef struct {
	Namespace, Kind, Name string
}

// PoolStatus is a pool's status, as ARC shows it for RunnerDeployment and RunnerSet.
type PoolStatus struct {
	Desired   int `json:"desiredReplicas"`
	Replicas  int `json:"replicas"`
	Updated   int `json:"updatedReplicas"`
	Ready     int `json:"readyReplicas"`
	Available int `json:"availableReplicas"`
	// FailingRunners and LastRunnerFailure say how many runners in a row could
	// not start, and why the last did; written at 0 and "" too, so a
	// registration clears them. The worker's watcher turns them into the
	// RunnersFailing condition.
	FailingRunners    int                     `json:"failingRunners"`
	LastRunnerFailure string                  `json:"lastRunnerFailure"`
	RunnerFailures    v1alpha1.RunnerFailures `json:"runnerFailures"`
	// VolumesInUse and VolumesFree count a RunnerSet's volume slots (a
	// RunnerDeployment's schema has no such fields; the API server drops them).
	VolumesInUse int `json:"volumesInUse"`
	VolumesFree  int `json:"volumesFree"`
	// TakenOver counts the live runners the pool took over rather than
	// created (v1alpha1.TakenOverStatus); written at 0 too, so the worker's
	// RunnersTakenOver condition turns False when the last one ends.
	TakenOver int `json:"takenOverRunners"`
	// Warm is the warm buffer of an autoscaler with arcflow.dev/idle-runners:
	// auto, and its idle runner-seconds; omitted for other pools.
	Warm v1alpha1.PoolWarmStatus `json:"warm,omitzero"`
	// ScaleSetID is the runner scale set the pool's runners join; omitted
	// without one (v1alpha1.ScaleSetStatus).
	ScaleSetID int64 `json:"scaleSetId,omitempty"`
}

// PoolStatusInput names the resource, its new status and the events to record.
type PoolStatusInput struct {
	Namespace, Kind, Name string
	Status                PoolStatus
	// Events are Normal events on the resource, e.g. "ScaledUp: created 2 runners".
	Events []string `json:",omitempty"`
}

// VolumeSlotRef names one volume slot of a pool.
type VolumeSlotRef struct {
	Index int
	Hash  string
	// Claims name the slot's claims by template where they are not named
	// after the slot: claims ARC made, which the pool took over.
	Claims map[string]string `json:",omitempty"`
}

// DeleteVolumesInput names volume slots of a pool to delete.
type DeleteVolumesInput struct {
	Namespace, Pool string
	Slots           []VolumeSlotRef
}
