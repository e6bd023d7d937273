package workflows

import (
	"time"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github/registry"
)

// RunnerPhase is where a runner is in its lifecycle (see runner.go).
type RunnerPhase string

// Runner phases.
const (
	PhaseCreating RunnerPhase = "Creating"
	// PhaseAdopted is a runner ARC left, taken over by its pool; it goes on
	// as Idle, Registering or leaving, as its pod and registration say.
	PhaseAdopted       RunnerPhase = "Adopted"
	PhaseRegistering   RunnerPhase = "Registering"
	PhaseIdle          RunnerPhase = "Idle"
	PhaseBusy          RunnerPhase = "Busy"
	PhaseUnregistering RunnerPhase = "Unregistering"
	PhaseDeleting      RunnerPhase = "Deleting"
	PhaseDone          RunnerPhase = "Done"
)

// Why a runner ended; the pool reads these from RunnerDone.
const (
	EndStopped             = "stopped"
	EndCompleted           = "completed"            // an ephemeral runner finished its job
	EndRegistrationTimeout = "registration-timeout" // Ready for 10 minutes, never registered
	EndPodDeleted          = "pod-deleted"          // deleted by someone else
	EndPodFailed           = "pod-failed"
	EndPodExited           = "pod-exited" // a static runner's pod ended by itself
	EndCreateFailed        = "create-failed"
	EndPodUnschedulable    = "pod-unschedulable" // no node took the pod for UnschedulableTimeout
	EndLeftRegistered      = "left-registered"   // the pod is gone but GitHub still calls the runner busy
)

// RunnerInput starts a runner workflow.
type RunnerInput struct {
	Pod       calls.RunnerPodInput
	Scope     registry.Scope
	Ephemeral bool
	// PoolWorkflowID receives a runner-done signal when the runner ends; empty for
	// a runner without a pool.
	PoolWorkflowID string `json:",omitempty"`
	Timings        RunnerTimings
	// RegistrationOnly: register, then delete the pod and stay registered (offline)
	// until stopped; for pools scaled to zero on GitHub servers that drop jobs with
	// no runner at all.
	RegistrationOnly bool `json:",omitempty"`
	// Adopted, when set, is the runner ARC left that this workflow takes over:
	// it creates no pod, and its end removes ARC's objects too.
	Adopted *calls.ARCRunner `json:",omitempty"`
	// PatientRegistration: the pool hears from deliveries when this runner
	// takes a job, which tells it that the runner registered, so the runner's
	// own registration checks may read a list of the scope's runners up to
	// github.PatientListFactor intervals old (a minute by default): while
	// runners register all the time, the scope's list is then read about once
	// a minute instead of once per interval.
	PatientRegistration bool `json:",omitempty"`
	// StartsTold: the pool's autoscaler passes this runner its job's start
	// (SignalJobStarted), which tells it that it registered. Its first
	// registration check then waits RegistrationPollMax: the start usually
	// comes first, for no timer, check or signal to the pool of its own.
	// Runners take that signal whatever their input says.
	StartsTold bool `json:",omitempty"`
	// PoolWakes: the runner starts no registration timer of its own until
	// its pool's registration-check (RunnerRevisionPoolWakes).
	PoolWakes bool `json:",omitempty"`
	// Created is what creating the runner returned when its start created it
	// (activities.Workflows.CreateRunner): a run of RunnerRevisionCreatedByStart
	// or later then begins as Registering, with no creation of its own.
	Created *calls.RunnerPodOutput `json:",omitempty"`
	// State carries a run's state across continue-as-new; nil on the first run.
	State *RunnerState `json:",omitempty"`
	// Revision is the code path the runner was started on (RunnerRevision*). It
	// rides in the input, not in a GetVersion marker, so a new path costs no
	// history event; continue-as-new keeps it, and a run replays on its own path.
	Revision int `json:",omitempty"`
}

// RunnerTaskTimeout is a runner's workflow task timeout. A runner of
// RunnerRevisionLocal makes its calls inside workflow tasks, so a worker killed
// mid-call is noticed when its task times out. A call slower than 80 % of the
// timeout keeps its task alive by a heartbeat (the SDK completes the task and
// takes a new one), which must reach Temporal within the remaining 20 %: with
// 5 s, a loaded frontend and a slow GitHub made every heartbeat late ("workflow
// task not found"), and the task ran its calls again and again. Temporal's
// default 10 s leaves 2 s; a killed worker's calls run again about 10 s later.
const RunnerTaskTimeout = 10 * time.Second

// Runner workflow revisions.
const (
	// RunnerRevisionActivities: every call an activity task, every phase change
	// upserted at once, the pool told by SignalExternalWorkflow (58-63 events for
	// an ephemeral runner's life).
	RunnerRevisionActivities = 0
	// RunnerRevisionLocal: the short Kubernetes and GitHub calls are local
	// activities in the workflow task that needs them, the phase is upserted only
	// when the runner waits in it, registering keeps one wake timer, and the pool
	// is signalled from a local activity.
	RunnerRevisionLocal = 1
	// RunnerRevisionRegisteringAtStart: as RunnerRevisionLocal, but the start
	// sets the runner-state search attribute to Registering, the first phase
	// such a runner waits in, so that phase costs no upsert: one Temporal Cloud
	// action and one visibility write less per runner. Creating, which lasts
	// the first workflow task, is then shown only while a creation waits
	// (after a rate limit).
	RunnerRevisionRegisteringAtStart = 2
	// RunnerRevisionQuietEnd: as RunnerRevisionRegisteringAtStart, but a
	// runner that last waited as Registering, Idle or Busy (a job's usual
	// life) does not publish Done as it ends: its workflow's Completed status
	// says that, its result why, and the upsert was an action per runner.
	// One that last showed something an operator looks for (DeleteBlocked,
	// Unregistering, ...) still ends as Done.
	RunnerRevisionQuietEnd = 3
	// RunnerRevisionReadyUntold: as RunnerRevisionQuietEnd, but a runner told
	// its job's start whose pod is marked ready-untold (RunnerPodInput.
	// ReadyUntold: not JIT) is not signalled when its pod starts running or
	// turns Ready, one action a runner: it reads its pod when a registration
	// wait ends without a start, and when a stop comes while it registers.
	RunnerRevisionReadyUntold = 4
	// RunnerRevisionPoolWakes: as RunnerRevisionReadyUntold, but a runner
	// started with PoolWakes waits to register on signals alone: its job's
	// start, its pod's end, a stop, or its pool's registration-check (one
	// timer in the pool for all its runners, in place of one per runner).
	// After that check it keeps a timer of its own, as before.
	RunnerRevisionPoolWakes = 5
	// RunnerRevisionRecheckAfterPodGone: as RunnerRevisionPoolWakes, but a
	// runner that deleted its pod before GitHub listed it looks for a late
	// registration once more when the pod is gone, after it told its pool
	// it ended: the runner process can still finish registering during its
	// termination grace period, which left that registration behind, offline.
	RunnerRevisionRecheckAfterPodGone = 6
	// RunnerRevisionBusyAfterIdle: as RunnerRevisionRecheckAfterPodGone, but
	// a runner that shows Idle (registered before a job came to it: an idle
	// buffer's runner, or one its pool's check found registered) shows Busy
	// once its job's start is told to it. Before, it showed Idle while its
	// job ran: the Web UI could not tell it from an idle one.
	RunnerRevisionBusyAfterIdle = 7
	// RunnerRevisionFoundBeforeRemoval: as RunnerRevisionBusyAfterIdle, but a
	// runner stopped while it waited for its registration, once a check finds
	// it registered, ends its workflow task before it removes the runner from
	// GitHub, so the history holds what the check found. Before, a worker that
	// died after GitHub removed the runner lost the task's calls; the task's
	// retry found no runner, and the runner waited for a registration that
	// had come and gone, its pod kept, until the registration timeout.
	RunnerRevisionFoundBeforeRemoval = 8
	// RunnerRevisionGroupedDone: a runner tells its pool it ended through
	// the worker's SignalWorkflowGrouped, which sends it alone as
	// runner-done or, with --group-runner-ends, grouped with the ends of
	// other runners of the pool as one runners-done signal.
	RunnerRevisionGroupedDone = 9
	// RunnerRevisionCreatedByStart: a runner whose start created it (its
	// input's Created) takes that as its creation's result, instead of a
	// local activity of its own that created it: one marker, so one action,
	// less a runner. A start that did not create it leaves the creation to
	// the runner, as before: starts create none while a replica of an older
	// release could run the runner (worker.WorkerRevisions).
	RunnerRevisionCreatedByStart = 10
	// RunnerRevisionLatest is the revision a pool starts its runners on.
	RunnerRevisionLatest = RunnerRevisionCreatedByStart
)

// quietEnd says that a runner whose search attribute shows phase may end
// without publishing Done (RunnerRevisionQuietEnd).
func quietEnd(phase RunnerPhase) bool {
	return phase == PhaseRegistering || phase == PhaseIdle || phase == PhaseBusy
}

// publishedAtStart is the runner-state search attribute a runner of the
// revision is started with (not adopted): the pool sets it, and the runner
// publishes no phase until it leaves that one.
func publishedAtStart(revision int) RunnerPhase {
	if revision >= RunnerRevisionRegisteringAtStart {
		return PhaseRegistering
	}
	return PhaseCreating
}

// RunnerTimings are the waits of the lifecycle. Zero values take ARC's numbers.
type RunnerTimings struct {
	// RegistrationTimeout: a pod Ready this long without registering is deleted (10m).
	RegistrationTimeout time.Duration
	// RegistrationPollMin and Max bound the backoff of registration checks (2s, 30s).
	RegistrationPollMin time.Duration
	RegistrationPollMax time.Duration
	// BusyRetry is how often a static runner retries RemoveRunner while busy (1m).
	BusyRetry time.Duration
	// OrphanRetries bounds RemoveRunner attempts for a runner whose pod is gone
	// while GitHub still reports it busy (5).
	OrphanRetries int
	// MaxHistoryEvents triggers continue-as-new (2000), besides Temporal's suggestion.
	MaxHistoryEvents int
	// UnschedulableTimeout: a pod no node can take this long is deleted, and the
	// pool backs off (5m; ARC waits forever, as its timeout counts from Ready).
	UnschedulableTimeout time.Duration `json:",omitempty"`
	// PodGoneWait bounds how long a finished runner waits to hear that the live
	// pod it deleted is gone (2m; see awaitPodGone).
	PodGoneWait time.Duration
}

func (t RunnerTimings) withDefaults() RunnerTimings {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.RegistrationTimeout, 10*time.Minute)
	def(&t.RegistrationPollMin, 2*time.Second)
	def(&t.RegistrationPollMax, 30*time.Second)
	def(&t.BusyRetry, time.Minute)
	def(&t.PodGoneWait, 2*time.Minute)
	def(&t.UnschedulableTimeout, DefaultUnschedulableTimeout)
	if t.OrphanRetries <= 0 {
		t.OrphanRetries = 5
	}
	if t.MaxHistoryEvents <= 0 {
		t.MaxHistoryEvents = 2000
	}
	return t
}

// DefaultUnschedulableTimeout is RunnerTimings.UnschedulableTimeout's default:
// longer than a cluster autoscaler usually takes to add a node, so a pod that
// waits for one is not deleted, far shorter than holding the slot for good.
const DefaultUnschedulableTimeout = 5 * time.Minute

// RunnerState is what the `state` query returns and what continue-as-new carries.
type RunnerState struct {
	Phase RunnerPhase
	Since time.Time
	// RunnerID is GitHub's ID once the runner registered; a JIT runner's is
	// known from its creation.
	RunnerID int64 `json:",omitempty"`
	// JobStarted: a job's start named this runner (SignalJobStarted).
	JobStarted bool `json:",omitempty"`
	// JITStarted: a JIT runner's pod was Ready, so its runner came up.
	JITStarted bool `json:",omitempty"`
	// CheckAsked: the pool's registration-check came and is not acted on yet;
	// PoolChecked: one was, so the runner keeps its own timer from then on.
	CheckAsked  bool `json:",omitempty"`
	PoolChecked bool `json:",omitempty"`
	// UnschedulableSince is when the pod was first reported unschedulable, zero
	// while it is not.
	UnschedulableSince time.Time `json:",omitempty"`
	Pod                calls.PodState
	// PoolToken: the pod reads the pool's token Secret, so deleting the runner
	// deletes no Secret of its own.
	PoolToken bool `json:",omitempty"`
	// StopRequested is set by the stop signal; StopReason is its reason.
	StopRequested bool   `json:",omitempty"`
	StopReason    string `json:",omitempty"`
	// EndReason says why the runner ended (End* constants).
	EndReason string `json:",omitempty"`
	// Polls counts registration checks; RemoveAttempts counts RemoveRunner calls.
	Polls          int `json:",omitempty"`
	RemoveAttempts int `json:",omitempty"`
	// RetryAt defers the next GitHub call, after a rate limit or a 422.
	RetryAt time.Time `json:",omitempty"`
	// PodReleased: a registration-only runner's pod was deleted on purpose.
	PodReleased bool `json:",omitempty"`
	// Unverified: the pod was deleted before GitHub listed the runner, so one more
	// lookup must make sure no registration is left behind.
	Unverified bool `json:",omitempty"`
	// RecheckWhenGone: that look found nothing while the pod terminated; one
	// more comes once the pod is gone (RunnerRevisionRecheckAfterPodGone).
	RecheckWhenGone bool `json:",omitempty"`
	// DeleteBlocked says why the last deletion of the runner's objects failed
	// (a write Kubernetes refused, such as one of ARC's admission webhooks),
	// and DeleteAttempts how many rounds failed; the deletion is retried on a
	// timer until it succeeds.
	DeleteBlocked  string `json:",omitempty"`
	DeleteAttempts int    `json:",omitempty"`
}

// StopRequest is the payload of the stop signal.
type StopRequest struct {
	Reason string `json:"reason,omitempty"`
}

// RunnerDone is the payload of the runner-done signal to the pool, and the result
// of the workflow.
type RunnerDone struct {
	Name     string
	Reason   string
	RunnerID int64 `json:",omitempty"`
	// NeverStarted: a JIT runner, which has its ID from its creation, ended
	// before its pod was Ready. (A token runner that never registered has no ID.)
	NeverStarted bool `json:",omitempty"`
	// Cause says what took the runner away when infrastructure did (its pod
	// deleted by someone else, evicted, its node lost, its container
	// OOM-killed: calls.Cause*); empty when the runner ended by itself
	// or was stopped. A busy runner's job is then lost (pool_lost.go).
	Cause string `json:",omitempty"`
}

// started reports whether the runner that sent d ever came up.
func (d RunnerDone) started() bool { return d.RunnerID != 0 && !d.NeverStarted }
