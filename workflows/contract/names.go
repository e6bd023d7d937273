package contract

import (
	"strconv"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// TaskQueue is the runner workflows' task queue, and that of every arcflow
// workflow started before ControlTaskQueue existed.
const TaskQueue = "arcflow"

// ControlTaskQueue is the autoscalers', pools' and scale set listeners' queue,
// with their activities. Its own queue, and its own worker's sticky queue,
// keep a pool's next decision from waiting behind a burst's runner tasks (it
// waited up to a second behind 100 of them).
const ControlTaskQueue = "arcflow-control"

// PollTaskQueue is the scale set polls' queue: its workers heartbeat at the
// SDK's pace, where the main queue's heartbeat every second.
const PollTaskQueue = "arcflow-scaleset-polls"

// Workflow IDs are readable and stable, so a person finds a runner, pool or
// autoscaler in the Temporal Web UI by its Kubernetes name.

// AutoscalerWorkflowID is hra/<namespace>/<name>.
func AutoscalerWorkflowID(namespace, name string) string {
	return "hra/" + namespace + "/" + name
}

// PoolWorkflowID is pool/<namespace>/<kind>/<name>, kind being RunnerDeployment or
// RunnerSet.
func PoolWorkflowID(namespace, kind, name string) string {
	return "pool/" + namespace + "/" + strings.ToLower(kind) + "/" + name
}

// RunnerWorkflowID is runner/<namespace>/<runner-name>.
func RunnerWorkflowID(namespace, runnerName string) string {
	return "runner/" + namespace + "/" + runnerName
}

// RerunWorkflowID is rerun/<owner>/<repo>/<run-id>/<job-name>: one workflow
// re-runs a lost job of a run, whatever attempt of the run lost it, so its
// count of re-runs holds across attempts.
func RerunWorkflowID(repository string, runID int64, jobName string) string {
	return "rerun/" + repository + "/" + strconv.FormatInt(runID, 10) + "/" + jobName
}

// Signal and query names.
const (
	SignalJob        = "job"
	SignalSpec       = "spec"
	SignalForceScale = "force-scale"
	SignalDelete     = "delete"
	SignalScale      = "scale"
	SignalPod        = "pod"
	SignalStop       = "stop"
	SignalRunnerDone = "runner-done"
	// SignalRunnersDone carries []RunnerDone: the ends of runners that ended
	// together, grouped by the worker into one signal (RunnerRevisionGroupedDone).
	SignalRunnersDone = "runners-done"
	// SignalRunnerRegistered: a runner tells its pool that GitHub lists it.
	SignalRunnerRegistered = "runner-registered"
	// SignalJobs carries []JobEvent: the webhook's group commit of the deliveries
	// that queued for one autoscaler while its previous signal was in flight.
	SignalJobs = "jobs"
	// SignalJobStarted carries a JobStarted from an autoscaler to the runner
	// a job started on (its in_progress delivery).
	SignalJobStarted = "job-started"
	// SignalRegistrationCheck asks a runner that waits for its job's start
	// without a timer of its own (RunnerInput.PoolWakes) to check its
	// registration: its pool sends it once the runner lived the registration
	// timeout with no start heard.
	SignalRegistrationCheck = "registration-check"
	// SignalJobLost carries a JobLost to a re-run workflow.
	SignalJobLost = "job-lost"
	QueryState    = "state"
)

// Custom search attributes. `arcflow setup` registers them on a cluster; the dev
// server gets them at start.
var (
	SearchAttrKind        = temporal.NewSearchAttributeKeyKeyword("ArcflowKind")
	SearchAttrPool        = temporal.NewSearchAttributeKeyKeyword("ArcflowPool")
	SearchAttrScope       = temporal.NewSearchAttributeKeyKeyword("ArcflowScope")
	SearchAttrRunnerName  = temporal.NewSearchAttributeKeyKeyword("ArcflowRunnerName")
	SearchAttrRunnerState = temporal.NewSearchAttributeKeyKeyword("ArcflowRunnerState")
)

// SearchAttributeTypes maps each custom search attribute to its Temporal type name.
func SearchAttributeTypes() map[string]string {
	types := map[string]string{}
	for _, key := range []temporal.SearchAttributeKeyKeyword{
		SearchAttrKind, SearchAttrPool, SearchAttrScope, SearchAttrRunnerName, SearchAttrRunnerState,
	} {
		types[key.GetName()] = "Keyword"
	}
	return types
}

// Memos are shown on a workflow's page in the Temporal Web UI, so a person sees
// which Kubernetes object a workflow stands for without decoding its input.

// AutoscalerMemo describes an autoscaler workflow.
func AutoscalerMemo(namespace, name, targetKind, targetName string) map[string]any {
	return map[string]any{"hra": namespace + "/" + name, "target": targetKind + "/" + targetName}
}

// PoolMemo describes a pool workflow.
func PoolMemo(namespace, kind, name, scope string) map[string]any {
	return map[string]any{"resource": kind + " " + namespace + "/" + name, "scope": scope}
}

// RunnerMemo describes a runner workflow.
func RunnerMemo(namespace, pod, kind, pool, scope string) map[string]any {
	return map[string]any{"pod": namespace + "/" + pod, "pool": kind + " " + namespace + "/" + pool, "scope": scope}
}
