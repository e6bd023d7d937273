package calls

import "time"

// Outcomes of a lost job's re-run (RerunLostJobOutput.Outcome and the
// arcflow_lost_jobs_total metric).
const (
	RerunDone         = "rerun"         // GitHub started a new attempt with the job
	RerunAlready      = "already-rerun" // the run moved on to a newer attempt (this call's earlier try, or a person)
	RerunWaiting      = "waiting"       // the run has not completed: GitHub takes no re-run yet
	RerunRefused      = "refused"       // GitHub refused for good (too old, too many attempts)
	RerunNoPermission = "no-permission" // the credentials lack actions: write
	RerunLimitReached = "limit-reached" // the job was re-run as often as the pool allows
)

// RerunLostJobInput names the job to re-run and the attempt of its run that
// lost it.
type RerunLostJobInput struct {
	Credentials string `json:",omitempty"`
	Repository  string
	RunID       int64
	JobID       int64
	RunAttempt  int
}

// RerunLostJobOutput says what came of it; Message is GitHub's, for a refusal.
type RerunLostJobOutput struct {
	Outcome string
	Message string `json:",omitempty"`
}

// LostJobReport is one outcome of a lost job, for the pool's resource and the metric.
type LostJobReport struct {
	Pool    PoolResourceRef
	Cause   string
	Outcome string
	// Message is the event's text: which job, which runner, what came of it.
	Message string
}

// FindRunnerJobInput names a runner whose failed job a runner scale set
// reported by the set's own job id: the job is found by the runner's name,
// in RunID when the set named it (0: the repository's runs are searched).
type FindRunnerJobInput struct {
	Credentials string `json:",omitempty"`
	Repository  string
	RunID       int64 `json:",omitempty"`
	Runner      string
	// QueuedAt bounds the search of runs: the job's run was created before it.
	QueuedAt time.Time `json:",omitzero"`
}

// FindRunnerJobOutput is the job the runner ran; Found is false when no run
// searched has a job that names it.
type FindRunnerJobOutput struct {
	Found      bool
	RunID      int64  `json:",omitempty"`
	JobID      int64  `json:",omitempty"`
	JobName    string `json:",omitempty"`
	RunAttempt int    `json:",omitempty"`
}
