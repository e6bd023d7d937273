package replaytest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// ns is the Kubernetes namespace in every recorded workflow ID.
const ns = "rec"

var scope = registry.Scope{Repository: "rec/app"}

// fastRunner shortens the runner's waits so a scenario takes seconds; the
// commands a runner issues do not depend on how long its timers are.
var fastRunner = workflows.RunnerTimings{
	RegistrationTimeout: 2 * time.Second,
	RegistrationPollMin: 100 * time.Millisecond,
	RegistrationPollMax: 400 * time.Millisecond,
	BusyRetry:           time.Second,
	PodGoneWait:         300 * time.Millisecond,
}

func runnerTemplate() activities.RunnerPodInput {
	return activities.RunnerPodInput{
		Kind: v1alpha1.KindRunnerDeployment, TemplateHash: "t1", GitHubURL: "https://github.com/",
		Spec: v1alpha1.RunnerSpec{RunnerConfig: v1alpha1.RunnerConfig{Repository: scope.Repository, Labels: []string{"linux"}}},
	}
}

// runnerIn is a runner of the sink pool, which only listens: standalone runners
// still signal a pool, as runners of a real one do.
func runnerIn(name string, ephemeral bool) workflows.RunnerInput {
	pod := runnerTemplate()
	pod.Name, pod.Namespace, pod.Pool = name, ns, "sink"
	return workflows.RunnerInput{
		Pod: pod, Scope: scope, Ephemeral: ephemeral, Timings: fastRunner,
		PoolWorkflowID: contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "sink"),
	}
}

func running(name, rv string, ready bool) activities.PodState {
	return activities.PodState{UID: podUID(name), ResourceVersion: rv, Exists: true, Phase: "Running", Ready: ready}
}

func exited(name, rv string, phase corev1.PodPhase) activities.PodState {
	return activities.PodState{UID: podUID(name), ResourceVersion: rv, Exists: true, Phase: phase}
}

// runnerScenario records one runner from start to end.
type runnerScenario struct {
	name string
	// prepare sets up the fake world before the start; drive signals the runner.
	prepare func(name string)
	in      func(name string) workflows.RunnerInput
	drive   func(r *recorder, id, name, firstRun string)
	reason  string
	// maxEvents, when set, bounds the history of the (single) run.
	maxEvents int
}

func TestRecordRunnerHistories(t *testing.T) {
	needServers(t)
	sink := newRecorder(t, plain, "sink")
	sinkID := contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, "sink")
	sink.start(sinkID, workflows.PoolWorkflow, workflows.PoolInput{Spec: workflows.PoolSpec{
		Namespace: ns, Kind: v1alpha1.KindRunnerDeployment, Name: "sink", Generation: 1, Scope: scope,
	}})
	t.Cleanup(func() {
		// The sink outlives the recorder's deadline; it needs a context of its own.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, plain.client.SignalWorkflow(ctx, sinkID, "", contract.SignalDelete, nil))
	})

	for _, sc := range runnerScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			r := newRecorder(t, plain, sc.name)
			name := sc.name + "-x1"
			id := contract.RunnerWorkflowID(ns, name)
			if sc.prepare != nil {
				sc.prepare(name)
			}
			in := runnerIn(name, false)
			if sc.in != nil {
				in = sc.in(name)
			}
			run := r.start(id, workflows.RunnerWorkflow, in)
			if sc.drive != nil {
				sc.drive(r, id, name, run)
			}
			var done workflows.RunnerDone
			r.waitDone(id, &done)
			require.Equal(t, sc.reason, done.Reason)
			r.export("", id, run)
			if sc.maxEvents > 0 {
				events := len(r.history(id, run))
				require.LessOrEqual(t, events, sc.maxEvents, "history events of the runner")
				t.Logf("%s: %d history events (at most %d)", sc.name, events, sc.maxEvents)
			}
			r.finish()
		})
	}
}

func waitPhase(r *recorder, id string, phase workflows.RunnerPhase) workflows.RunnerState {
	r.t.Helper()
	return waitState(r, id, "phase "+string(phase), func(s workflows.RunnerState) bool { return s.Phase == phase })
}

// idle brings a runner's pod up and waits until GitHub lists the runner.
func idle(r *recorder, id, name string) {
	r.signal(id, contract.SignalPod, running(name, "1", true))
	waitPhase(r, id, workflows.PhaseIdle)
}

// stopWhileBusy stops an idle runner while GitHub calls it busy, so RemoveRunner
// answers 422, and lets the job end once the runner is Busy.
func stopWhileBusy(r *recorder, id, name string) {
	idle(r, id, name)
	fakes.set(fakes.busy, name, true)
	r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
	waitPhase(r, id, workflows.PhaseBusy)
	fakes.set(fakes.busy, name, false)
}

func runnerScenarios() []runnerScenario {
	scenarios := activityRunnerScenarios()
	// The same lives on RunnerRevisionLocal, bounded by the target of
	// 40 events for an ephemeral runner's life.
	for _, sc := range scenarios {
		switch sc.name {
		case "runner-ephemeral-job-done", "runner-stop-idle", "runner-registration-timeout", "runner-pod-deleted", "runner-busy-ephemeral",
			"runner-stop-while-registering":
			scenarios = append(scenarios, onRevision(sc, workflows.RunnerRevisionLocal, "local", 40))
		}
		// And on RunnerRevisionRegisteringAtStart, whose first phase costs no upsert.
		switch sc.name {
		case "runner-ephemeral-job-done", "runner-stop-while-registering":
			scenarios = append(scenarios, onRevision(sc, workflows.RunnerRevisionRegisteringAtStart, "registering-at-start", 40))
		}
		// And on RunnerRevisionQuietEnd, which ends a job's usual life without
		// publishing Done, and a blocked one with it.
		switch sc.name {
		case "runner-ephemeral-job-done", "runner-stop-idle", "runner-pod-deleted":
			scenarios = append(scenarios, onRevision(sc, workflows.RunnerRevisionQuietEnd, "quiet-end", 40))
		}
		// And on RunnerRevisionFoundBeforeRemoval, whose task ends between
		// the check that finds a stopped runner and its removal.
		if sc.name == "runner-stop-while-registering" {
			scenarios = append(scenarios, onRevision(sc, workflows.RunnerRevisionFoundBeforeRemoval, "found-before-removal", 40))
		}
	}
	return append(scenarios, readyUntoldScenarios()...)
}

// readyUntoldScenarios are runners of RunnerRevisionReadyUntold, told their
// job's start, whose pods' start and readiness are not signalled: one whose
// job starts, one that never registers and times out from its pod's Ready
// condition, read at each check, and one stopped while it registers.
func readyUntoldScenarios() []runnerScenario {
	untold := func(ephemeral bool) func(string) workflows.RunnerInput {
		return func(name string) workflows.RunnerInput {
			in := runnerIn(name, ephemeral)
			in.Revision, in.StartsTold, in.Pod.ReadyUntold = workflows.RunnerRevisionReadyUntold, true, true
			return in
		}
	}
	return []runnerScenario{{
		name: "runner-ready-untold-job-done", in: untold(true), reason: workflows.EndCompleted, maxEvents: 40,
		drive: func(r *recorder, id, name, _ string) {
			r.signal(id, contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
			waitPhase(r, id, workflows.PhaseBusy)
			r.signal(id, contract.SignalPod, exited(name, "2", corev1.PodSucceeded))
		},
	}, {
		name: "runner-ready-untold-registration-timeout", in: untold(true), reason: workflows.EndRegistrationTimeout,
		prepare: func(name string) { fakes.set(fakes.neverRegister, name, true) },
	}, {
		name: "runner-ready-untold-stop-while-registering", in: untold(false), reason: workflows.EndStopped,
		drive: func(r *recorder, id, _, _ string) {
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
		},
	}, {
		// Stopped while its pod is Pending: deleted at once, and looked for
		// once more when the pod is gone (RunnerRevisionRecheckAfterPodGone).
		name: "runner-stop-while-pending", reason: workflows.EndStopped,
		in: func(name string) workflows.RunnerInput {
			in := untold(true)(name)
			in.Revision = workflows.RunnerRevisionRecheckAfterPodGone
			return in
		},
		prepare: func(name string) { fakes.set(fakes.neverRegister, name, true) },
		drive: func(r *recorder, id, name, _ string) {
			r.signal(id, contract.SignalPod, activities.PodState{UID: podUID(name), ResourceVersion: "1", Exists: true, Phase: "Pending"})
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
			waitState(r, id, "stop requested", func(s workflows.RunnerState) bool { return s.StopRequested })
			r.signal(id, contract.SignalPod, activities.PodState{UID: podUID(name), ResourceVersion: "deleted"})
		},
	}, {
		// Registered before its job came: Idle, then Busy once told its
		// job's start (RunnerRevisionBusyAfterIdle).
		name: "runner-busy-after-idle", reason: workflows.EndCompleted,
		in: func(name string) workflows.RunnerInput {
			in := runnerIn(name, true)
			in.Revision = workflows.RunnerRevisionBusyAfterIdle
			return in
		},
		drive: func(r *recorder, id, name, _ string) {
			idle(r, id, name)
			r.signal(id, contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: runnerID(name)})
			waitPhase(r, id, workflows.PhaseBusy)
			r.signal(id, contract.SignalPod, exited(name, "2", corev1.PodSucceeded))
		},
	}}
}

// onRevision is a scenario for runners started on the given revision, named
// runner-<label>-….
func onRevision(sc runnerScenario, revision int, label string, maxEvents int) runnerScenario {
	in := sc.in
	if in == nil {
		in = func(name string) workflows.RunnerInput { return runnerIn(name, false) }
	}
	sc.name = strings.Replace(sc.name, "runner-", "runner-"+label+"-", 1)
	sc.in = func(name string) workflows.RunnerInput {
		started := in(name)
		started.Revision = revision
		return started
	}
	sc.maxEvents = maxEvents
	return sc
}

// activityRunnerScenarios are the lives of runners started before
// RunnerRevisionLocal: every call an activity task.
func activityRunnerScenarios() []runnerScenario {
	ephemeral := func(name string) workflows.RunnerInput { return runnerIn(name, true) }
	return []runnerScenario{{
		name: "runner-ephemeral-job-done", in: ephemeral, reason: workflows.EndCompleted,
		drive: func(r *recorder, id, name, _ string) {
			idle(r, id, name)
			r.signal(id, contract.SignalPod, running(name, "1", true)) // a repeated event changes nothing
			r.signal(id, contract.SignalPod, exited(name, "2", corev1.PodSucceeded))
		},
	}, {
		name: "runner-stop-idle", reason: workflows.EndStopped,
		drive: func(r *recorder, id, name, _ string) {
			idle(r, id, name)
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
		},
	}, {
		// 422 on RemoveRunner: an ephemeral runner waits for its job to end.
		name: "runner-busy-ephemeral", in: ephemeral, reason: workflows.EndStopped,
		drive: func(r *recorder, id, name, _ string) {
			stopWhileBusy(r, id, name)
			r.signal(id, contract.SignalPod, exited(name, "2", corev1.PodSucceeded))
		},
	}, {
		// 422 on RemoveRunner: a static runner asks again after BusyRetry.
		name: "runner-busy-static", reason: workflows.EndStopped,
		drive: func(r *recorder, id, name, _ string) { stopWhileBusy(r, id, name) },
	}, {
		name: "runner-registration-timeout", reason: workflows.EndRegistrationTimeout,
		prepare: func(name string) { fakes.set(fakes.neverRegister, name, true) },
		drive: func(r *recorder, id, name, _ string) {
			r.signal(id, contract.SignalPod, running(name, "1", true))
		},
	}, {
		name: "runner-create-failed", reason: workflows.EndCreateFailed,
		prepare: func(name string) { fakes.set(fakes.invalid, name, true) },
	}, {
		name: "runner-pod-deleted", reason: workflows.EndPodDeleted,
		drive: func(r *recorder, id, name, _ string) {
			idle(r, id, name)
			r.signal(id, contract.SignalPod, activities.PodState{UID: podUID(name), ResourceVersion: "2"})
		},
	}, {
		// Registered, then its pod deleted on purpose; stays registered until stopped.
		name: "runner-registration-only", reason: workflows.EndStopped,
		in: func(name string) workflows.RunnerInput {
			in := runnerIn(name, false)
			in.RegistrationOnly = true
			return in
		},
		drive: func(r *recorder, id, name, _ string) {
			idle(r, id, name)
			waitState(r, id, "pod released", func(s workflows.RunnerState) bool { return s.PodReleased })
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-up"})
		},
	}, {
		// The run after a continue-as-new that drained a stop signal: it starts
		// idle with the stop in its state (the drained-stop version).
		name: "runner-drained-stop", reason: workflows.EndStopped,
		in: func(name string) workflows.RunnerInput {
			in := runnerIn(name, false)
			in.State = &workflows.RunnerState{
				Phase: workflows.PhaseIdle, RunnerID: runnerID(name), Pod: running(name, "1", true),
				StopRequested: true, StopReason: "scale-down",
			}
			return in
		},
	}, {
		// Stopped while its pod runs and it has not registered yet: it waits
		// to be listed (the stop-awaits-registration version), then is removed.
		name: "runner-stop-while-registering", reason: workflows.EndStopped,
		prepare: func(name string) { fakes.set(fakes.neverRegister, name, true) },
		in: func(name string) workflows.RunnerInput {
			in := runnerIn(name, true)
			in.Timings.RegistrationTimeout = time.Minute
			return in
		},
		drive: func(r *recorder, id, name, _ string) {
			r.signal(id, contract.SignalPod, running(name, "1", true))
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
			waitState(r, id, "stop requested", func(s workflows.RunnerState) bool { return s.StopRequested })
			fakes.set(fakes.neverRegister, name, false)
		},
	}, {
		// A runner that polls long enough to continue as new, then registers.
		name: "runner-continue-as-new", reason: workflows.EndStopped,
		prepare: func(name string) { fakes.set(fakes.neverRegister, name, true) },
		in: func(name string) workflows.RunnerInput {
			in := runnerIn(name, false)
			in.Timings.RegistrationTimeout = time.Minute
			in.Timings.MaxHistoryEvents = 20
			return in
		},
		drive: func(r *recorder, id, name, firstRun string) {
			r.signal(id, contract.SignalPod, running(name, "1", true))
			r.waitContinued(id, firstRun)
			fakes.set(fakes.neverRegister, name, false)
			waitPhase(r, id, workflows.PhaseIdle)
			r.signal(id, contract.SignalStop, workflows.StopRequest{Reason: "scale-down"})
		},
	}}
}
