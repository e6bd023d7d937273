package workflows

import (
	"time"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github/registry"
)

// ScaleSetSpec is a pool's runner scale set as its listener needs it. The
// watcher builds it from the RunnerDeployment or RunnerSet and its HRA.
type ScaleSetSpec struct {
	Namespace string
	Kind      string
	Pool      string
	Scope     registry.Scope
	// Name and RunnerGroup find the set; Labels are given it at creation
	// (the service fixes them then).
	Name        string
	RunnerGroup string `json:",omitempty"`
	Labels      []string
	// MaxRunners is the HRA's maxReplicas, the capacity each poll sends.
	MaxRunners int
	// MinRunners is the HRA's minReplicas; only the worker's gha_min_runners
	// and gha_desired_runners read it (the autoscaler has its own).
	MinRunners int `json:",omitempty"`
	// Autoscaler is the workflow ID of the HRA that scales the pool, which
	// hears the demand; empty while there is none.
	Autoscaler string `json:",omitempty"`
	Generation int64  `json:",omitempty"`
	// PollHeartbeatTimeout is how soon Temporal gives a poll whose worker died
	// to another (DefaultPollHeartbeatTimeout when zero). The worker
	// heartbeats at 80 % of it, so it is also what an idle set costs.
	PollHeartbeatTimeout time.Duration `json:",omitempty"`
	// PollMaxWait is how long one poll activity waits for a message before it
	// returns empty (DefaultPollMaxWait when zero).
	PollMaxWait time.Duration `json:",omitempty"`
}

// Listener defaults.
const (
	// DefaultPollHeartbeatTimeout: at 80 %, about 38 heartbeats an idle
	// hour. A dead worker's poll moves on sooner, when its liveness Lease
	// expires (worker.PollWatch); the timeout is the fallback.
	DefaultPollHeartbeatTimeout = 2 * time.Minute
	DefaultPollMaxWait          = time.Hour
	// sessionConflictFirstWait and sessionConflictMaxWait pace the retries of
	// a session another listener holds.
	sessionConflictFirstWait = 5 * time.Second
	sessionConflictMaxWait   = time.Minute
	// scaleSetMaxHistory makes the listener continue as new.
	scaleSetMaxHistory = 2000
)

func (s ScaleSetSpec) withDefaults() ScaleSetSpec {
	if s.PollHeartbeatTimeout <= 0 {
		s.PollHeartbeatTimeout = DefaultPollHeartbeatTimeout
	}
	if s.PollMaxWait <= 0 {
		s.PollMaxWait = DefaultPollMaxWait
	}
	return s
}

// ScaleSetInput starts or continues a listener.
type ScaleSetInput struct {
	Spec  ScaleSetSpec
	State *ScaleSetState `json:",omitempty"`
}

// ScaleSetState is what the `state` query returns and continue-as-new
// carries: the cursor, the session, the last statistics and the open jobs.
// It holds no token: the session's lives in the worker that polls.
type ScaleSetState struct {
	Spec          ScaleSetSpec
	ScaleSetID    int64  `json:",omitempty"`
	RunnerGroupID int64  `json:",omitempty"`
	SessionID     string `json:",omitempty"`
	// LastMessageID is the cursor: the last message recorded. Unacked is a
	// recorded message not yet deleted; the next poll deletes it.
	LastMessageID int64 `json:",omitempty"`
	Unacked       int64 `json:",omitempty"`
	Statistics    calls.ScaleSetStatistics
	// Jobs are the open jobs by the service's job id.
	Jobs map[string]ScaleSetJob `json:",omitempty"`
	// ConflictWait is the next wait for a session another listener holds.
	ConflictWait time.Duration `json:",omitempty"`
	// AcquireListed: the session is new, so the next poll acquires what the
	// set may (GitHub Enterprise Server).
	AcquireListed bool `json:",omitempty"`
	// PoolTold is the set id the pool last accepted.
	PoolTold int64 `json:",omitempty"`
	// Messages counts the messages recorded since the listener started;
	// Polls the poll activities, whose IDs (poll-N) it numbers.
	Messages int64 `json:",omitempty"`
	Polls    int64 `json:",omitempty"`
	Deleting bool  `json:",omitempty"`
	// Held: `arcflow drain` closed the session; nothing is polled until
	// `arcflow drain --undo`.
	Held bool `json:",omitempty"`
	// LostSession is a session of this listener's that the service said was
	// lost: deleted before the next is opened, as one left alive would hold
	// the set until it expires.
	LostSession string `json:",omitempty"`
	// HeldBy is the service's word on who holds the set while another
	// session does; Reported what the pool's ScaleSetSession condition says
	// ("open", or "held: " and HeldBy).
	HeldBy   string `json:",omitempty"`
	Reported string `json:",omitempty"`
	// ConflictInActivity: the open activity waits out a conflict
	// (conflictInActivityVersion).
	ConflictInActivity bool `json:",omitempty"`
}

// ScaleSetJob is an open job of the set.
type ScaleSetJob struct {
	// State is available, assigned, started or withdrawn (assigned, not
	// taken, to be assigned again).
	State      string
	RunnerName string    `json:",omitempty"`
	Repository string    `json:",omitempty"`
	Since      time.Time `json:",omitzero"`
}
