package contract

import (
	"hash/fnv"
	"strings"
)

// ScaleSetWorkflowID is scaleset/<namespace>/<kind>/<name>: the listener of
// the runner scale set a RunnerDeployment or RunnerSet joins.
func ScaleSetWorkflowID(namespace, kind, name string) string {
	return "scaleset/" + namespace + "/" + strings.ToLower(kind) + "/" + name
}

// ScaleSetWorkflowType is the listener's workflow type name.
const ScaleSetWorkflowType = "ScaleSetWorkflow"

// SignalScaleSet carries a ScaleSetMessage from a scale set's listener to the
// autoscaler of its pool.
const SignalScaleSet = "scale-set"

// SignalScaleSetID carries a ScaleSetID from a listener to its pool.
const SignalScaleSetID = "scale-set-id"

// ScaleSetMessage is one message of a scale set's queue, as its listener
// recorded it: the demand level and the job starts and ends.
type ScaleSetMessage struct {
	// ScaleSetID and MessageID order the messages: the autoscaler ignores one
	// it has applied (a redelivery after a listener's failover).
	ScaleSetID int64 `json:"scaleSetID"`
	MessageID  int64 `json:"messageID"`
	// Assigned is the service's totalAssignedJobs: jobs waiting or running on
	// the set. It is the demand, a level, never a count of events.
	Assigned int `json:"assigned"`
	// Events are the message's job starts (in_progress) and ends
	// (completed), keyed by the job's scale set id (ScaleSetJobKey).
	Events []JobEvent `json:"events,omitempty"`
}

// ScaleSetID tells a pool the id of its runners' scale set; Name is the
// set's name, for its status.
type ScaleSetID struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// ScaleSetJobKey maps a scale set's string job id onto the int64 JobEvent
// key (FNV-1a, 63 bits): the same job always gets the same key.
func ScaleSetJobKey(jobID string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(jobID))
	return int64(h.Sum64() >> 1)
}

// SignalPollLost carries a PollLost from the leader's watch to a listener.
const SignalPollLost = "poll-lost"

// PollLost says the worker that runs a listener's poll activity is gone (its
// liveness Lease expired): the listener abandons that poll and polls again,
// on a live worker, without waiting for the heartbeat timeout.
type PollLost struct {
	ActivityID string `json:"activityID"`
	Worker     string `json:"worker"`
}

// SignalHold carries a Hold from `arcflow drain` to a listener.
const SignalHold = "hold"

// Hold says whether a listener holds off: while held it has no session (so
// the service assigns the set's jobs to none of arcflow's runners) and polls
// nothing; Held false resumes it.
type Hold struct {
	Held bool `json:"held"`
}
