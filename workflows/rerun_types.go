package workflows

import (
	"time"

	"github.com/arcflow/arcflow/activities/calls"
)

// FailedJob is a job that completed failed or cancelled on a runner, as its
// completed delivery told (ScaleRequest.Failed): if that runner was lost to
// infrastructure, the job is re-run (pool_lost.go).
type FailedJob struct {
	Runner     string
	Repository string
	RunID      int64
	JobID      int64
	JobName    string
	RunAttempt int
	Conclusion string    `json:",omitempty"`
	At         time.Time `json:",omitzero"`
	// FindByRunner: a runner scale set reported the job by an id of its own
	// (JobID is not GitHub's, RunID may be 0): the pool finds it by Runner,
	// in the runs created before QueuedAt, before it is re-run.
	FindByRunner bool      `json:",omitempty"`
	QueuedAt     time.Time `json:",omitzero"`
}

// LostRunner is a runner of the pool that infrastructure took away while it
// was registered (RunnerDone.Cause).
type LostRunner struct {
	Name, Cause string
	At          time.Time
}

// JobLost is the job-lost signal to a re-run workflow (and its start): one
// attempt of a job whose runner infrastructure took away.
type JobLost struct {
	JobID      int64
	RunAttempt int
	Runner     string
	Cause      string
	// Limit is how many re-runs the pool allows each job (PoolSpec.RerunLostJobs).
	Limit       int
	Pool        calls.PoolResourceRef
	Credentials string    `json:",omitempty"`
	At          time.Time `json:",omitzero"`
}

// RerunInput starts a re-run workflow: the job of a run, by name, whichever
// attempt of the run loses it.
type RerunInput struct {
	Repository string
	RunID      int64
	JobName    string
	// Watch is how long the workflow stays after its last re-run or refusal,
	// to count a loss of the re-run job against the limit (DefaultRerunWatch).
	Watch time.Duration `json:",omitempty"`
	// FirstPoll is the first wait for the run to complete (DefaultRerunFirstPoll),
	// doubled up to MaxPoll (DefaultRerunMaxPoll).
	FirstPoll time.Duration `json:",omitempty"`
	MaxPoll   time.Duration `json:",omitempty"`
	State     *RerunState   `json:",omitempty"`
}

// Re-run workflow timings.
const (
	// DefaultRerunWatch covers a re-run job's life (GitHub's default job
	// timeout is 6 hours): a loss of it within this time counts against the
	// limit; after it, the job's loss counts from zero again.
	DefaultRerunWatch = 24 * time.Hour
	// DefaultRerunFirstPoll: GitHub fails a job whose runner vanished within
	// minutes, and the run completes once its other jobs are done.
	DefaultRerunFirstPoll = 15 * time.Second
	DefaultRerunMaxPoll   = 10 * time.Minute
)

// Phases of a re-run workflow, in its state and its ArcflowRunnerState search attribute.
const (
	RerunPhaseWaiting = "WaitingForRun" // the run has not completed: GitHub takes no re-run yet
	RerunPhaseWatch   = "Watching"      // re-run (or refused); a loss of the new attempt still counts
)

// RerunState is what the state query returns and continue-as-new carries.
type RerunState struct {
	Phase string
	// Reruns is how many times this workflow re-ran the job.
	Reruns int
	// Lost lists every loss heard, oldest first; a repeat of a job ID is ignored.
	Lost []JobLost
	// Pending is the loss being handled, nil while watching.
	Pending *JobLost `json:",omitempty"`
	// Outcomes lists what came of each loss (calls.Rerun*), in order.
	Outcomes []string `json:",omitempty"`
	// WatchUntil is when the workflow ends if no loss comes.
	WatchUntil time.Time `json:",omitzero"`
	Polls      int       `json:",omitempty"`
}
