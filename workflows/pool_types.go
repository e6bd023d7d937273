package workflows

import (
	"slices"
	"time"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
)

// PoolSpec is a RunnerDeployment or RunnerSet as its pool workflow needs it. The
// watcher builds it from the custom resource and sends it with the spec signal.
type PoolSpec struct {
	Namespace string
	Kind      string
	Name      string
	// Generation of the resource; a pool ignores a spec older than the one it has.
	Generation int64
	Replicas   int
	Ephemeral  bool
	Scope      registry.Scope
	// TemplateHash changes when the runner template changes; a new hash rolls the pool.
	TemplateHash string
	// Runner is the template of every runner; its Name is filled per runner.
	Runner        calls.RunnerPodInput
	RunnerTimings RunnerTimings `json:",omitempty"`
	// RegistrationOnly keeps one registered, offline runner while the pool is at
	// zero (opt-in, seed 001).
	RegistrationOnly bool `json:",omitempty"`
	// VolumeHash identifies a RunnerSet's volumeClaimTemplates; empty without
	// any (see pool_volumes.go). VolumeIdleTimeout is how long a free volume
	// slot is kept (DefaultVolumeIdleTimeout).
	VolumeHash        string        `json:",omitempty"`
	VolumeIdleTimeout time.Duration `json:",omitempty"`
	// DeletionGracePeriod bounds how long a deleted pool waits for its busy
	// runners (DefaultPoolDeletionGrace when zero).
	DeletionGracePeriod time.Duration `json:",omitempty"`
	// RerunLostJobs is how many times a job lost to infrastructure is re-run
	// (arcflow.dev/rerun-lost-jobs; zero: never). See pool_lost.go.
	RerunLostJobs int `json:",omitempty"`
	// StatusInterval paces status writes of changed counts
	// (DefaultPoolStatusInterval when zero; see pool_status.go).
	StatusInterval time.Duration `json:",omitempty"`
	// ScaleSet is the runner scale set the runners join
	// (arcflow.dev/scale-set); the pool creates none until its listener gives
	// the set's id (pool_scaleset.go).
	ScaleSet *v1alpha1.ScaleSetRef `json:",omitempty"`
}

// ScaleRequest is the autoscaler's scale signal: replicas and the effective time of
// the reservations behind them. A newer effective time (a job queued, or one that
// waited beyond maxReplicas getting its slot) sends the signal even when the counts
// are unchanged, so the pool learns that the autoscaler has counted finished jobs
// (see CompletionGrace).
type ScaleRequest struct {
	Replicas      int       `json:"replicas"`
	EffectiveTime time.Time `json:"effectiveTime,omitempty"`
	// Demand, when below Replicas, is what the jobs need now; the rest is the
	// scale-down hold. The pool keeps runners up to Replicas but creates new ones
	// only up to Demand, so a finished ephemeral runner is not replaced just to
	// honour the hold. Nil means Replicas (a force-scale signal or a CLI user).
	Demand *int `json:"demand,omitempty"`
	// Ceiling is the autoscaler's maxReplicas: the pool runs no more runner
	// pods than this, finishing and stopping ones included (PoolView.Ceiling).
	// Zero (a force-scale, a CLI user, an older autoscaler) sets none.
	Ceiling int `json:"ceiling,omitempty"`
	// DecidedAt is when the autoscaler decided. A runner that finished after it
	// may be counted in Replicas still, so the pool does not replace it before
	// CompletionGrace; zero (a force-scale, a CLI user, an older autoscaler)
	// counts as decided when the pool received it.
	DecidedAt time.Time `json:"decidedAt,omitempty"`
	// Finished names runners whose jobs the autoscaler heard complete since
	// its last request: an ephemeral one is about to exit, so the pool stops
	// counting it (PoolRunner.Finishing) instead of stopping another runner
	// for the replica it no longer needs.
	Finished []string `json:"finished,omitempty"`
	// Failed are the jobs among Finished's that completed failed or
	// cancelled: a pool whose runner of one was lost to infrastructure
	// re-runs the job (pool_lost.go).
	Failed []FailedJob `json:"failed,omitempty"`
	// StartsTold: the autoscaler hears the pool's jobs queue, and passes each
	// job's start to its runner (SignalJobStarted).
	StartsTold bool `json:"startsTold,omitempty"`
	// Warm, from an autoscaler with arcflow.dev/idle-runners: auto, says
	// which of Replicas are its warm buffer, and from what.
	Warm *WarmRequest `json:"warm,omitempty"`
	// Running names runners whose jobs started since the last request
	// (in_progress deliveries): each is registered and busy until its job's
	// completion names it in Finished. StartsDelivered says the autoscaler
	// hears its jobs start, so a registered runner no delivery named has no
	// job that a delivery told of: the pool need not list the scope's runners
	// to tell busy from idle (pool_busy.go).
	Running         []string `json:"running,omitempty"`
	StartsDelivered bool     `json:"startsDelivered,omitempty"`
	// NamesFinished says the autoscaler hears its jobs (by webhook, or from a
	// scale set's listener), and so names each runner in Finished once its
	// job's completion comes: the pool counts an ephemeral runner that ended
	// before that as capacity meanwhile (pool_unheard.go). A metric-driven
	// autoscaler, a force-scale and a CLI user leave it false.
	NamesFinished bool `json:"namesFinished,omitempty"`
	// NamesWithin is how long after a job's completion at most its runner is
	// named (the autoscaler may hold a completion for its scale-down delay,
	// autoscaler_deferred.go): the pool counts an ended runner that long.
	NamesWithin time.Duration `json:"namesWithin,omitempty"`
}

// Demanded is how many runners the jobs need now: Demand when it is below
// Replicas, Replicas otherwise.
func (r *ScaleRequest) Demanded() int {
	if r.Demand != nil && *r.Demand < r.Replicas {
		return max(*r.Demand, 0)
	}
	return r.Replicas
}

// RunnerRegistered is a runner's signal to its pool once GitHub lists it.
type RunnerRegistered struct {
	Name string
}

// PoolInput starts or continues a pool workflow.
type PoolInput struct {
	Spec  PoolSpec
	State *PoolState `json:",omitempty"`
}

// PoolState is what the `state` query returns and what continue-as-new carries.
type PoolState struct {
	Spec PoolSpec
	// LostRunners and FailedJobs wait for each other to make a lost job
	// (pool_lost.go); both empty unless the pool re-runs lost jobs.
	LostRunners []LostRunner `json:",omitempty"`
	// BusyListedFor is the template hash of the rollout for which GitHub's
	// list told which old runners were busy (pool_surge.go): once per rollout.
	BusyListedFor string      `json:",omitempty"`
	FailedJobs    []FailedJob `json:",omitempty"`
	// Scale is the autoscaler's last request; when set, it wins over Spec.Replicas.
	Scale   *ScaleRequest `json:",omitempty"`
	Runners []PoolRunner
	// TimeoutStreak counts runners in a row that failed to register; it backs off
	// creation so a broken image does not create pods in a tight loop.
	TimeoutStreak int `json:",omitempty"`
	// LastFailure is the End* reason of the last runner that could not start,
	// while TimeoutStreak counts; Failures count them all (pools since
	// runnerFailureStatusVersion).
	LastFailure     string                  `json:",omitempty"`
	Failures        v1alpha1.RunnerFailures `json:",omitempty"`
	CreateNotBefore time.Time               `json:",omitempty"`
	// LastJobFinished is when an ephemeral runner last ended after its job, and
	// ScaleReceived when the autoscaler last spoke; see CompletionGrace.
	LastJobFinished time.Time `json:",omitempty"`
	ScaleReceived   time.Time `json:",omitempty"`
	// StartsSince is when the autoscaler first said it passes the starts of
	// its jobs (ScaleRequest.StartsDelivered): the busy state of a runner
	// created since is known from deliveries (pool_busy.go).
	StartsSince time.Time `json:",omitzero"`
	// Unheard are ephemeral runners that ended after their job before the
	// autoscaler named them; they count as capacity meanwhile (pool_unheard.go).
	Unheard  []UnheardRunner `json:",omitempty"`
	Deleting bool            `json:",omitempty"`
	// DeletingSince is when the pool heard of its deletion, and
	// DeletionForced that it deleted its busy runners' pods at the end of the
	// grace period (pool_delete.go).
	DeletingSince  time.Time `json:",omitzero"`
	DeletionForced bool      `json:",omitempty"`
	Status         PoolStatus
	// StatusWrittenAt is when Status was last written (pool_status.go).
	StatusWrittenAt time.Time `json:",omitzero"`
	// NamesMade counts the runner names derived in this run (derivedSuffix).
	NamesMade int `json:",omitempty"`
	// Volumes are a RunnerSet's volume slots.
	Volumes []VolumeSlot `json:",omitempty"`
	// Warm holds the runners' times to ready and the idle runner-seconds.
	Warm PoolWarm `json:",omitzero"`
	// ScaleSetID is the id of Spec.ScaleSet, from its listener.
	ScaleSetID int64 `json:",omitempty"`
}

// Desired is the replica count the pool converges to.
func (s *PoolState) Desired() int {
	switch {
	case s.Deleting:
		return 0
	case s.Scale != nil:
		return s.Scale.Replicas
	}
	return s.Spec.Replicas
}

// Demand is the count the pool creates runners up to (see ScaleRequest.Demand).
func (s *PoolState) Demand() int {
	if s.Scale != nil && !s.Deleting {
		return s.Scale.Demanded()
	}
	return s.Desired()
}

// PoolStatus is written back to the custom resource's status.
type PoolStatus = calls.PoolStatus

// hasRunner says whether a runner of that name is the pool's.
func (s *PoolState) hasRunner(name string) bool {
	return slices.ContainsFunc(s.Runners, func(r PoolRunner) bool { return r.Name == name })
}
