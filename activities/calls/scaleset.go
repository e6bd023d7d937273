package calls

import (
	"time"

	"github.com/arcflow/arcflow/github/registry"
)

// ScaleSetRef names a scale set: its scope and id.
type ScaleSetRef struct {
	Scope registry.Scope
	ID    int64
}

// EnsureScaleSetInput finds a scale set by name in its runner group, or
// creates it with Labels. KnownID, when set, is checked first.
type EnsureScaleSetInput struct {
	Scope       registry.Scope
	Name        string
	RunnerGroup string `json:",omitempty"`
	Labels      []string
	KnownID     int64 `json:",omitempty"`
}

// EnsureScaleSetOutput is the set found or made. Replaced: KnownID is gone
// (the service deletes a set offline for days) and this is another set, whose
// queue starts over.
type EnsureScaleSetOutput struct {
	ID            int64
	RunnerGroupID int64
	Created       bool `json:",omitempty"`
	Replaced      bool `json:",omitempty"`
}

// OpenScaleSetSessionInput takes the set's session: SessionID, when set, is
// refreshed (another process's session is taken over that way), else a new
// one is created with Owner as its owner name. Stale, when set, is a session
// of this listener's that it lost: it is deleted first, as a session left
// alive holds the set (409) until it expires.
type OpenScaleSetSessionInput struct {
	Set       ScaleSetRef
	SessionID string `json:",omitempty"`
	Owner     string
	Stale     string `json:",omitempty"`
	// WaitOnConflict, when set, makes a conflict be tried again every 5 to
	// 10 s for up to that long before it is the outcome.
	WaitOnConflict time.Duration `json:",omitempty"`
}

// OpenScaleSetSessionOutput: the session, or why there is none. Conflict: the
// set has another live session (a second listener, or one that died), so the
// workflow waits and tries again; SetGone: the set is deleted.
type OpenScaleSetSessionOutput struct {
	SessionID  string             `json:",omitempty"`
	Statistics ScaleSetStatistics `json:",omitzero"`
	Conflict   bool               `json:",omitempty"`
	SetGone    bool               `json:",omitempty"`
	// Holder is the service's word on who holds the set in a Conflict (it
	// names the other session's owner).
	Holder string `json:",omitempty"`
}

// ScaleSetStatistics are the service's counts for a set.
type ScaleSetStatistics struct {
	Available, Acquired, Assigned, Running int `json:",omitempty"`
	Registered, Busy, Idle                 int `json:",omitempty"`
}

// PollScaleSetInput long-polls a session's queue. AckMessageID, when set, is
// the message the workflow has recorded: it is deleted first. The poll then
// waits, over any number of empty polls, for the first message after
// LastMessageID, at most MaxWait. MaxCapacity is what the set may run.
// AcquireListed (GitHub Enterprise Server, after a session starts) acquires
// the jobs the set may acquire before the first poll.
type PollScaleSetInput struct {
	Set           ScaleSetRef
	SessionID     string
	LastMessageID int64 `json:",omitempty"`
	AckMessageID  int64 `json:",omitempty"`
	MaxCapacity   int
	MaxWait       time.Duration
	AcquireListed bool `json:",omitempty"`
	// Name, Namespace, MinRunners and Statistics are for the worker's
	// arcflow_gha_ metrics only: the set's name and the pool's namespace
	// label them, and the gauges show the last statistics recorded and
	// minRunners while the poll runs.
	Name       string             `json:",omitempty"`
	Namespace  string             `json:",omitempty"`
	MinRunners int                `json:",omitempty"`
	Statistics ScaleSetStatistics `json:",omitzero"`
}

// PollScaleSetOutput is a message, or what ended the poll without one.
type PollScaleSetOutput struct {
	Message *ScaleSetQueueMessage `json:",omitempty"`
	// SessionLost: the session expired or was evicted; SetGone: the set was
	// deleted. Neither: MaxWait passed with no message.
	SessionLost bool `json:",omitempty"`
	SetGone     bool `json:",omitempty"`
	// EmptyPolls counts the polls that brought nothing.
	EmptyPolls int `json:",omitempty"`
}

// ScaleSetQueueMessage is a message of the queue, without anything secret.
type ScaleSetQueueMessage struct {
	ID         int64
	Statistics ScaleSetStatistics
	Jobs       []ScaleSetJob `json:",omitempty"`
}

// ScaleSetJob is a job message.
type ScaleSetJob struct {
	Type             string
	JobID            string
	RequestID        int64     `json:",omitempty"`
	RunID            int64     `json:",omitempty"`
	Repository       string    `json:",omitempty"`
	JobName          string    `json:",omitempty"`
	RunnerID         int64     `json:",omitempty"`
	RunnerName       string    `json:",omitempty"`
	Result           string    `json:",omitempty"`
	QueuedAt         time.Time `json:",omitzero"`
	RunnerAssignedAt time.Time `json:",omitzero"`
}

// CloseScaleSetSessionInput deletes a session, so that another listener may
// take the set at once.
type CloseScaleSetSessionInput struct {
	Set       ScaleSetRef
	SessionID string
}

// ScaleSetSessionReport says on a pool's resource whether its listener holds
// its set's session (Holder empty), or who does while it waits (Holder is the
// service's word, which names the other session's owner).
type ScaleSetSessionReport struct {
	Pool       PoolResourceRef
	ScaleSetID int64
	Holder     string `json:",omitempty"`
}
