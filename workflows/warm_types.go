package workflows

import (
	"time"
)

// AutoscalerWarm is the autoscaler's side of the warm buffer: the arrival
// rate it measures, the time to ready its pool reports, and the count it
// chose. Every autoscaler counts arrivals, so one switched to auto starts
// from what it has seen; only one with arcflow.dev/idle-runners: auto keeps
// a buffer.
type AutoscalerWarm struct {
	Arrivals Arrivals
	// ReadyTime is the pool's time to ready (ReadyTimePercentile of Samples
	// runners), from its last ready-time signal; zero until one came.
	ReadyTime time.Duration `json:",omitempty"`
	Samples   int           `json:",omitempty"`
	// Runners is the warm count of the last decision.
	Runners int `json:",omitempty"`
	// Written is the HRA's status.warm as last written.
	Written *WarmWritten `json:",omitempty"`
	// Starts are the runners of completed jobs that waited for them, for
	// the next scale request (WarmRequest.Starts); at most readySamples.
	Starts []RunnerStart `json:",omitempty"`
	// ScopeBusyUntil is the scale-down delay after the scope's latest
	// scale-out, as last read: a buffer past its own jobs stays until then
	// (autoscaler_scope.go). RestedAfter is the last job (Arrivals.Last)
	// before the buffer rested for a quiet scope; it rests until the next.
	ScopeBusyUntil time.Time `json:",omitzero"`
	RestedAfter    time.Time `json:",omitzero"`
}

// RunnerStart is when a job that had waited started on a runner: the moment
// that runner became ready, as GitHub saw it; and when GitHub queued it.
type RunnerStart struct {
	Runner    string    `json:"runner"`
	StartedAt time.Time `json:"startedAt"`
	// QueuedAt is zero in the requests of autoscalers that did not send it.
	QueuedAt time.Time `json:"queuedAt,omitzero"`
}

// WarmWritten is what the HRA's status.warm says; it is written again when
// the count changes, the rate or the time to ready moves by a tenth, or the
// last job is arrivalWrittenWithin newer.
type WarmWritten struct {
	Runners     int
	Rate        float64
	ReadyTime   time.Duration
	LastArrival time.Time `json:",omitzero"`
}

// ReadyTimeReport is the pool's ready-time signal to its autoscaler.
type ReadyTimeReport struct {
	ReadyTime time.Duration `json:"readyTime"`
	Samples   int           `json:"samples"`
}

// WarmRequest rides in a scale request from an autoscaler with
// arcflow.dev/idle-runners: auto: what it chose and from what, for the pool's
// state and status, and where the pool reports its time to ready.
type WarmRequest struct {
	// Runners of Replicas are the warm buffer.
	Runners int `json:"runners"`
	// Jobs is how many jobs the autoscaler holds reservations for (queued or
	// running): the pool counts its registered runners beyond them as idle.
	Jobs int `json:"jobs"`
	// Rate (jobs per second) and ReadyTime are what Runners was sized from.
	Rate      float64       `json:"rate"`
	ReadyTime time.Duration `json:"readyTime,omitempty"`
	// From is the autoscaler's workflow ID.
	From string `json:"from"`
	// Starts are new samples of the time to ready (RunnerStart), once each.
	Starts []RunnerStart `json:"starts,omitempty"`
}

func (w *WarmRequest) same(o *WarmRequest) bool {
	if w == nil || o == nil {
		return w == o
	}
	return w.Runners == o.Runners && w.Jobs == o.Jobs && w.ReadyTime == o.ReadyTime && len(w.Starts) == 0
}

// PoolWarm is the pool's side of the warm buffer: its runners' times to
// ready, what it last reported of them, and the idle runner-seconds.
type PoolWarm struct {
	// ReadyTimes are the newest runners' pod created -> registered as the
	// pool heard it, at most readySamples, oldest first. The runners learn of
	// their registration from a shared runner list, up to a list interval
	// and a poll late, so these run long; JobReadyTimes, pod created -> the
	// start of a job that had waited for the runner, do not, and are used
	// once there are any.
	ReadyTimes    []time.Duration `json:",omitempty"`
	JobReadyTimes []time.Duration `json:",omitempty"`
	// Ended are the newest runners that ended, with their creation, for a
	// job start that comes after its runner's end; at most endedRunners.
	Ended []EndedRunner `json:",omitempty"`
	// Reported is the time to ready last sent to the autoscaler, at ReportedAt.
	Reported   time.Duration `json:",omitempty"`
	ReportedAt time.Time     `json:",omitzero"`
	// IdleSeconds adds up IdleRunners over time; IdleRunners were idle
	// since IdleSince (registered runners beyond the autoscaler's jobs).
	IdleSeconds float64   `json:",omitempty"`
	IdleRunners int       `json:",omitempty"`
	IdleSince   time.Time `json:",omitzero"`
	// IdleWrittenAt is when status.warm.idleRunnerSeconds was last brought
	// up to date.
	IdleWrittenAt time.Time `json:",omitzero"`
}

// EndedRunner is a runner that ended, and when it was created.
type EndedRunner struct {
	Name    string
	Created time.Time
}
