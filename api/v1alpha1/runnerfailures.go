package v1alpha1

// RunnerFailures counts, by reason, the runners of a pool that could not start
// (beyond ARC). arcflow_runner_failures_total exports them.
type RunnerFailures struct {
	// CreateFailed: the pod or its Secret could not be created.
	// +optional
	CreateFailed int64 `json:"createFailed,omitempty"`
	// RegistrationTimeout: Ready for the registration timeout, never registered.
	// +optional
	RegistrationTimeout int64 `json:"registrationTimeout,omitempty"`
	// PodFailed: the pod failed before its runner registered (a crashing image).
	// +optional
	PodFailed int64 `json:"podFailed,omitempty"`
	// PodExited: the pod exited before its runner registered.
	// +optional
	PodExited int64 `json:"podExited,omitempty"`
	// PodUnschedulable: no node could take the pod for the unschedulable timeout.
	// +optional
	PodUnschedulable int64 `json:"podUnschedulable,omitempty"`
}

// FailingRunnersStatus is in both pool resources' status.
type FailingRunnersStatus struct {
	// FailingRunners is how many runners in a row could not start; the first
	// runner that registers sets it back to 0.
	// +optional
	FailingRunners int `json:"failingRunners,omitempty"`
	// LastRunnerFailure is why the last of them could not start.
	// +optional
	LastRunnerFailure string `json:"lastRunnerFailure,omitempty"`
	// RunnerFailures counts every runner that could not start, by reason.
	// +optional
	RunnerFailures *RunnerFailures `json:"runnerFailures,omitempty"`
}
