package v1alpha1

// TakenOverStatus is in both pool resources' status (beyond ARC).
type TakenOverStatus struct {
	// TakenOverRunners is how many of the pool's runners it took over rather
	// than created, and that still run: runners ARC left, or its own runners
	// after Temporal lost their workflows. The worker shows it as the
	// RunnersTakenOver condition.
	// +optional
	TakenOverRunners int `json:"takenOverRunners,omitempty"`
}
