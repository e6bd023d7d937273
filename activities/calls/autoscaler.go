package calls

import (
	"time"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
)

// HRAStatusInput is an autoscaler's status.
type HRAStatusInput struct {
	Namespace, Name            string
	DesiredReplicas            *int
	LastSuccessfulScaleOutTime *time.Time
	ScheduledOverridesSummary  *string
}

// QueuedJobsInput names the repositories to list and the target's runner labels.
type QueuedJobsInput struct {
	Repositories []string
	Labels       []string
	// Credentials is the githubAPICredentialsFrom Secret to list with (namespace/name).
	Credentials string `json:",omitempty"`
	// ByRun asks only about what the webhooks did not say: the open runs, and
	// the jobs of queued runs not in KnownRuns (ReconcileByRun).
	ByRun     bool    `json:",omitempty"`
	KnownRuns []int64 `json:",omitempty"`
	// Quiet: with ByRun, a queued run younger than this is not asked about
	// (at most RunQuiet; reconcileByRun).
	Quiet time.Duration `json:",omitempty"`
	// Running: with ByRun, for an autoscaler with no history (Temporal's store
	// lost or replaced, or a new HRA): every open run's jobs, however young,
	// and the in-progress ones among them (InProgress), which its runners
	// taken over from the cluster run.
	Running bool `json:",omitempty"`
}

// QueuedJobsOutput are the open jobs the target's runners can take.
type QueuedJobsOutput struct {
	Queued     []int64
	InProgress []int64
	// With ByRun: QueuedRuns[i] is the run of Queued[i]; OpenRuns are the
	// queued and in-progress runs; Calls the GitHub requests it took (cache
	// hits included); Deferred says the budget was spent and nothing was asked.
	QueuedRuns []int64 `json:",omitempty"`
	// InProgressRuns[i] is the run of InProgress[i], with ByRun and Running.
	InProgressRuns []int64 `json:",omitempty"`
	OpenRuns       []int64 `json:",omitempty"`
	Calls          int     `json:",omitempty"`
	Deferred       bool    `json:",omitempty"`
}

// MetricsInput is what the pull metrics need.
type MetricsInput struct {
	Namespace, Pool string
	Scope           registry.Scope
	Labels          []string
	Repositories    []string
	Metrics         []v1alpha1.MetricSpec
	CurrentReplicas int
}

// RunQuiet is the longest a queued run goes unasked by the reconcile
// (QueuedJobsInput.Quiet): its queued delivery is on its way or went to
// another autoscaler of the repository (each knows only its own runs), so
// asking would cost a call per young run per autoscaler for nothing. A run
// still queued and unknown after it is a missed delivery, which the next
// reconcile finds.
const RunQuiet = time.Minute

// HRAWarmStatusInput is the warm buffer an autoscaler with
// arcflow.dev/idle-runners: auto chose; Clear removes status.warm from an
// autoscaler that no longer keeps one.
type HRAWarmStatusInput struct {
	Namespace, Name string
	Warm            v1alpha1.WarmRunnersStatus
	Clear           bool `json:",omitempty"`
}

// ScopeActivityInput names an autoscaler (its namespace and HRA, which is
// left out) and the GitHub scope its runners register in
// (registry.Scope.String()).
type ScopeActivityInput struct {
	Namespace, Scope, Except string
}

// ScopeActivityOutput is when another autoscaler of the scope last heard of a
// job, and how many others the scope has in the namespace.
type ScopeActivityOutput struct {
	LastArrival time.Time `json:",omitzero"`
	Autoscalers int
}
