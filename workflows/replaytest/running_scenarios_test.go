package replaytest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// An autoscaler that hears its jobs start (issue 28) and its pool: in_progress
// deliveries name the runners that took jobs, the next scale request passes
// them on, and the scale-down after a job that never ran (cancelled while
// queued) stops the idle runner without asking GitHub which runners are busy.
func TestRecordRunningHistories(t *testing.T) {
	needServers(t)
	t.Run("autoscaler-running-runners", func(t *testing.T) {
		spec := autoscalerSpec("autoscaler-running-runners")
		a := newRecorder(t, plain, "autoscaler-running-runners").startAutoscaled(spec)
		registered := func(n int) []workflows.PoolRunner {
			p := waitState(a.r, a.pool, "the pool's runners registered", func(p workflows.PoolState) bool {
				count := 0
				for _, r := range p.Runners {
					if r.Registered && !r.Stopping {
						count++
					}
				}
				return count == n
			})
			return p.Runners
		}
		start := func(delivery string, job int64, runner string) {
			fakes.set(fakes.busy, runner, true)
			a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: delivery, JobID: job, Action: "in_progress",
				RunnerName: runner, Repository: scope.Repository})
		}
		a.job("q1", 1, "queued")
		a.sent(1, 1)
		first := registered(1)[0].Name
		start("s1", 1, first)
		a.job("q2", 2, "queued") // the request that passes the start
		a.sent(2, 2)
		a.job("q3", 3, "queued")
		a.sent(3, 3)
		runners := registered(3)
		for i, r := range runners {
			if r.Name != first && i < 2 {
				start("s2", 2, r.Name)
			}
		}
		a.job("c3", 3, "completed") // cancelled while queued: no runner
		waitState(a.r, a.pool, "the idle runner stopped", func(p workflows.PoolState) bool {
			return p.Scale != nil && p.Scale.Replicas == 2 && len(p.Runners) == 2
		})
		for _, r := range runners[:2] {
			fakes.set(fakes.busy, r.Name, false)
		}
		a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: first, Repository: scope.Repository})
		a.job("c2", 2, "completed")
		a.sent(0, 0)
		a.finish()
	})
	// Starts alone need no decision (quiet-starts): the autoscaler keeps
	// waiting on the timer it has, then passes the names with its next
	// request.
	t.Run("autoscaler-quiet-starts", func(t *testing.T) {
		spec := autoscalerSpec("autoscaler-quiet-starts")
		a := newRecorder(t, plain, "autoscaler-quiet-starts").startAutoscaled(spec)
		a.job("q1", 1, "queued")
		a.job("q2", 2, "queued")
		a.sent(2, 2)
		timers := func() int {
			n := 0
			for _, ev := range a.r.history(a.hra, a.hraRun) {
				if ev.GetTimerStartedEventAttributes() != nil {
					n++
				}
			}
			return n
		}
		// Once the decision's activities are done, the wait's timer is the
		// last event: the autoscaler waits.
		a.r.poll("the autoscaler waiting on its timer", func() (bool, string) {
			events := a.r.history(a.hra, a.hraRun)
			last := events[len(events)-1]
			return last.GetTimerStartedEventAttributes() != nil, last.GetEventType().String()
		})
		before := timers()
		for i, runner := range []string{"runner-a", "runner-b"} {
			a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "s" + runner, JobID: int64(i + 1), Action: "in_progress",
				RunnerName: runner, Repository: scope.Repository})
		}
		waitState(a.r, a.hra, "both starts taken", func(s workflows.AutoscalerState) bool { return len(s.Running) == 2 })
		require.Equal(t, before, timers(), "no decision, no new timer for a start")
		a.job("q3", 3, "queued")
		s := a.sent(3, 3)
		require.Empty(t, s.Running, "passed with the request")
		require.True(t, s.Sent.StartsDelivered)
		for i := 1; i <= 3; i++ {
			a.job("c"+string(rune('0'+i)), int64(i), "completed")
		}
		a.sent(0, 0)
		a.finish()
	})
	// A job's start goes from the autoscaler to its runner (job-started),
	// which learns from it that it registered and shows Busy; the autoscaler
	// keeps its wake-up timer across decisions, and the pool derives its
	// runners' names and paces its count-only status writes.
	t.Run("autoscaler-job-starts", func(t *testing.T) {
		r := newRecorder(t, plain, "autoscaler-job-starts")
		spec := autoscalerSpec("autoscaler-job-starts")
		a := &autoscaled{r: r, hra: contract.AutoscalerWorkflowID(spec.Namespace, spec.Name)}
		pool := poolSpec(spec.TargetName, spec.TargetKind, 0, true)
		pool.RunnerTimings.RegistrationPollMax = time.Minute // the start comes long before the first check
		a.pool, a.poolRun = r.startPool(pool)
		a.hraRun = r.start(a.hra, workflows.AutoscalerWorkflow, workflows.AutoscalerInput{Spec: spec})
		a.job("q1", 1, "queued")
		a.sent(1, 1)
		p := waitState(r, a.pool, "one runner", func(p workflows.PoolState) bool { return len(p.Runners) == 1 })
		name := p.Runners[0].Name
		runner := contract.RunnerWorkflowID(ns, name)
		// The pool names its runner before it starts the runner's workflow; a
		// job can start on a runner only once that workflow made its pod, so
		// the start waits for it (under load a start signalled before was
		// lost, and the runner waited a minute for its first check).
		waitState(r, runner, "the runner's workflow started", func(workflows.RunnerState) bool { return true })
		fakes.set(fakes.busy, name, true)
		r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "s1", JobID: 1, Action: "in_progress",
			RunnerName: name, RunnerID: runnerID(name), Repository: scope.Repository})
		state := waitState(r, runner, "the runner busy", func(s workflows.RunnerState) bool { return s.Phase == workflows.PhaseBusy })
		require.Equal(t, runnerID(name), state.RunnerID)
		fakes.set(fakes.busy, name, false)
		r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: name, Repository: scope.Repository})
		a.sent(0, 0)
		// Deleted, the pool stops its finishing runner (a fake pod does not exit).
		r.signal(a.hra, contract.SignalDelete, nil)
		r.waitDone(a.hra, nil)
		r.signal(a.pool, contract.SignalDelete, nil)
		r.waitDone(a.pool, nil)
		r.waitDone(runner, nil)
		r.export("", a.hra, a.hraRun)
		r.export("-pool", a.pool, a.poolRun)
		r.export("-runner1", runner, r.firstRun(runner))
		r.finish()
	})
	// Runners that wait for their pool's registration check
	// (pool-registration-wakes): the one whose job starts never checks; the
	// other is asked at the registration timeout, finds itself registered and
	// shows Idle; the scale-down then stops it.
	t.Run("pool-registration-wakes", func(t *testing.T) { recordPoolWakes(t, "pool-registration-wakes", true) })
	// The same on a fresh pool, whose runners wait for its check before any
	// job start was heard (pool-wakes-before-starts).
	t.Run("pool-wakes-before-starts", func(t *testing.T) { recordPoolWakes(t, "pool-wakes-before-starts", false) })
	// The same on kept-later-wakes: an earlier wake no longer cancels the
	// pool's or the autoscaler's later timer.
	t.Run("kept-later-wakes", func(t *testing.T) { recordPoolWakes(t, "kept-later-wakes", false) })
	// The same with runners of RunnerRevisionGroupedDone, whose ends the
	// recorder's worker groups as --group-runner-ends does (runners-done).
	t.Run("grouped-runner-ends", func(t *testing.T) { recordPoolWakes(t, "grouped-runner-ends", false) })
	// The same with runners of RunnerRevisionCreatedByStart, whose pods
	// the pool's start creates (runners-created-at-start).
	t.Run("runners-created-at-start", func(t *testing.T) { recordPoolWakes(t, "runners-created-at-start", false) })
	// A completion while the count is held sends nothing
	// (deferred-completions): the runner's name rides on the next job's
	// request, and the pool counts the ended runner meanwhile (namesWithin).
	t.Run("autoscaler-deferred-completions", func(t *testing.T) {
		spec := autoscalerSpec("autoscaler-deferred-completions")
		spec.ScaleDownDelay = 20 * time.Second
		a := newRecorder(t, plain, "autoscaler-deferred-completions").startAutoscaled(spec)
		a.job("q1", 1, "queued")
		a.job("q2", 2, "queued")
		p := waitState(a.r, a.pool, "two runners", func(p workflows.PoolState) bool { return len(p.Runners) == 2 })
		a.sent(2, 2)
		runner := p.Runners[0].Name
		a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: runner, Repository: scope.Repository})
		held := waitState(a.r, a.hra, "the completion taken, held back", func(s workflows.AutoscalerState) bool {
			return len(s.Reservations.Active) == 1 && len(s.Finished) == 1
		})
		require.Nil(t, held.Sent.Finished, "not sent")
		a.job("q3", 3, "queued")
		s := waitState(a.r, a.hra, "the next request with the name", func(s workflows.AutoscalerState) bool {
			return len(s.Reservations.Active) == 2 && len(s.Finished) == 0
		})
		require.Equal(t, 20*time.Second+30*time.Second, s.Sent.NamesWithin)
		a.job("c2", 2, "completed")
		a.job("c3", 3, "completed")
		a.r.signal(a.hra, contract.SignalForceScale, workflows.ForceScale{Replicas: 0, Duration: "1s"})
		a.sent(0, 0)
		a.finish()
	})
}

// recordPoolWakes records two runners that wait for their pool's registration
// check, after a first job's start (firstJob) or on a fresh pool.
func recordPoolWakes(t *testing.T, name string, firstJob bool) {
	r := newRecorder(t, plain, name)
	spec := autoscalerSpec(name)
	a := &autoscaled{r: r, hra: contract.AutoscalerWorkflowID(spec.Namespace, spec.Name)}
	pool := poolSpec(spec.TargetName, spec.TargetKind, 0, true)
	pool.RunnerTimings.RegistrationTimeout, pool.RunnerTimings.RegistrationPollMax = 3*time.Second, time.Minute
	a.pool, a.poolRun = r.startPool(pool)
	a.hraRun = r.start(a.hra, workflows.AutoscalerWorkflow, workflows.AutoscalerInput{Spec: spec})
	first := "" // the first job's runner, not one of the two
	if firstJob {
		// Before pool-wakes-before-starts, only a start heard made the
		// pool's next runners wait for it.
		a.job("q0", 10, "queued")
		a.sent(1, 1)
		p := waitState(r, a.pool, "one runner", func(p workflows.PoolState) bool { return len(p.Runners) == 1 })
		first = p.Runners[0].Name
		waitState(r, contract.RunnerWorkflowID(ns, first), "the first runner's workflow started", func(workflows.RunnerState) bool { return true })
		r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "s0", JobID: 10, Action: "in_progress",
			RunnerName: first, RunnerID: runnerID(first), Repository: scope.Repository})
		r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c0", JobID: 10, Action: "completed", RunnerName: first, Repository: scope.Repository})
	}
	a.job("q1", 1, "queued")
	a.job("q2", 2, "queued")
	p := waitState(r, a.pool, "two runners that wait for the pool", func(p workflows.PoolState) bool {
		n := 0
		for _, pr := range p.Runners {
			if pr.PoolWakes && pr.Name != first {
				n++
			}
		}
		return n == 2
	})
	var wakes []string
	for _, pr := range p.Runners {
		if pr.PoolWakes && pr.Name != first {
			wakes = append(wakes, pr.Name)
		}
	}
	busy, idle := wakes[0], wakes[1]
	busyID, idleID := contract.RunnerWorkflowID(ns, busy), contract.RunnerWorkflowID(ns, idle)
	waitState(r, busyID, "the runner's workflow started", func(workflows.RunnerState) bool { return true })
	fakes.set(fakes.busy, busy, true)
	r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "s1", JobID: 1, Action: "in_progress",
		RunnerName: busy, RunnerID: runnerID(busy), Repository: scope.Repository})
	waitState(r, busyID, "the runner busy", func(s workflows.RunnerState) bool { return s.Phase == workflows.PhaseBusy })
	idleState := waitState(r, idleID, "the other runner checked when its pool asked", func(s workflows.RunnerState) bool {
		return s.Phase == workflows.PhaseIdle
	})
	require.True(t, idleState.PoolChecked)
	fakes.set(fakes.busy, busy, false)
	r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c1", JobID: 1, Action: "completed", RunnerName: busy, Repository: scope.Repository})
	a.job("c2", 2, "completed")
	a.sent(0, 0)
	r.waitDone(idleID, nil)
	r.signal(a.hra, contract.SignalDelete, nil)
	r.waitDone(a.hra, nil)
	r.signal(a.pool, contract.SignalDelete, nil)
	r.waitDone(a.pool, nil)
	r.waitDone(busyID, nil)
	r.export("", a.hra, a.hraRun)
	r.export("-pool", a.pool, a.poolRun)
	r.export("-busy", busyID, r.firstRun(busyID))
	r.export("-idle", idleID, r.firstRun(idleID))
	r.finish()
}
