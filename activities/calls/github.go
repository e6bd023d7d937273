package calls

import "github.com/arcflow/arcflow/github/registry"

// FindRunnerInput names a runner in a scope.
type FindRunnerInput struct {
	Scope registry.Scope
	Name  string
	// Fresh reads the list now instead of the scope's shared one, for checks
	// that must not miss a registration that just landed.
	Fresh bool `json:",omitempty"`
	// Patient reads a shared list up to github.PatientListFactor intervals
	// old, for a runner whose pool hears its job start from a delivery.
	Patient bool `json:",omitempty"`
}

// FindRunnerOutput is what GitHub says of the runner.
type FindRunnerOutput struct {
	Found  bool
	ID     int64
	Busy   bool
	Online bool
}

// RemoveRunnerInput names a registered runner.
type RemoveRunnerInput struct {
	Scope registry.Scope
	Name  string
	ID    int64
}

// RemoveRunnerOutput says whether the runner was already gone.
type RemoveRunnerOutput struct {
	AlreadyGone bool
}

// RunnerBusyInput names the runners of one scope whose busy flags a pool needs.
type RunnerBusyInput struct {
	Scope registry.Scope
	Names []string
	// Fresh reads the list now (it becomes the shared one): for a rollout
	// that must not take a runner whose job just started for an idle one.
	Fresh bool `json:",omitempty"`
}
