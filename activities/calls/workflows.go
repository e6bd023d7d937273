package calls

import (
	"encoding/json"
	"time"
)

// WorkflowSignal is one signal to send to a running workflow.
type WorkflowSignal struct {
	WorkflowID, Name string
	// Arg is the signal's one argument as JSON, encoded by the caller so this
	// package needs none of the workflow types.
	Arg json.RawMessage
}

// GroupedSignal is a signal that may go grouped with others
// (SignalWorkflowGrouped): as GroupName with the list of the group's
// arguments when the worker groups signals, else as Name with Arg alone.
type GroupedSignal struct {
	WorkflowID, Name, GroupName string
	Arg                         json.RawMessage
}

// WorkflowSignalStart signals a workflow, starting it first when none of its
// ID runs (one that closed is started again).
type WorkflowSignalStart struct {
	Start  WorkflowStart
	Signal string
	Arg    json.RawMessage
}

// WorkflowStart is one workflow to start.
type WorkflowStart struct {
	ID, Type, TaskQueue string
	// Input is the workflow's one argument as JSON, encoded by the caller so
	// this package needs none of the workflow types.
	Input json.RawMessage
	Memo  map[string]any `json:",omitempty"`
	// Keywords are Keyword search attributes.
	Keywords map[string]string `json:",omitempty"`
	// TaskTimeout is the workflow task timeout (zero: Temporal's 10 s).
	TaskTimeout time.Duration `json:",omitempty"`
	// ReuseClosed starts the workflow even when one of its ID closed: a runner
	// taken over from its pod, whose earlier workflow may have ended while
	// the pod lingered.
	ReuseClosed bool `json:",omitempty"`
	// RunnerPod, when set, is the runner the start creates before its
	// workflow (StartWorkflows): the creation's output goes into the
	// workflow's input as its Created field.
	RunnerPod *RunnerPodInput `json:",omitempty"`
}

// Size is how many bytes the start takes in an activity's input.
func (s WorkflowStart) Size() int {
	b, err := json.Marshal(s)
	if err != nil { // plain data: cannot fail
		panic(err)
	}
	return len(b)
}
