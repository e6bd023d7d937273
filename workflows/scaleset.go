package workflows

// The scale set listener holds one runner scale set's session and reads its
// message queue, with no inbound endpoint:
//
//	EnsureScaleSet ──▶ OpenScaleSetSession ──▶ PollScaleSet ⟲ (heartbeating; loops over empty polls)
//	    ▲ set gone          │ 409: timer 5 s → 60 s      │ message: recorded here, then deleted by
//	    └───────────────────┴────────────────────────────┘ the next poll, then the cursor moves
//
// Each recorded message sends the set's demand (totalAssignedJobs, a level)
// and its job starts and ends to the pool's autoscaler in one signal.

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// ScaleSetWorkflow runs one scale set's listener; its ID is
// contract.ScaleSetWorkflowID(namespace, kind, pool).
func ScaleSetWorkflow(ctx workflow.Context, in ScaleSetInput) error {
	l := &listener{}
	if in.State != nil {
		l.state = *in.State
	} else {
		l.state = ScaleSetState{Spec: in.Spec}
	}
	l.state.Spec = l.state.Spec.withDefaults()
	l.specs = workflow.GetSignalChannel(ctx, contract.SignalSpec)
	l.deletes = workflow.GetSignalChannel(ctx, contract.SignalDelete)
	l.lostPolls = workflow.GetSignalChannel(ctx, contract.SignalPollLost)
	l.holds = workflow.GetSignalChannel(ctx, contract.SignalHold)
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (ScaleSetState, error) { return l.state, nil }); err != nil {
		return err
	}
	for !l.state.Deleting {
		l.step(ctx)
		info := workflow.GetInfo(ctx)
		if info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > scaleSetMaxHistory {
			l.drainSignals(ctx)
			if !l.state.Deleting {
				return workflow.NewContinueAsNewError(onControlQueue(ctx), ScaleSetWorkflow, ScaleSetInput{Spec: l.state.Spec, State: &l.state})
			}
		}
	}
	l.closeSession(ctx)
	return nil
}

type listener struct {
	state                            ScaleSetState
	specs, deletes, lostPolls, holds workflow.ReceiveChannel
	// polling is the activity ID of the poll running now; lost that the
	// worker running it is gone (PollLost).
	polling string
	lost    bool
}

// step does the next thing the listener needs: a set, a session, or a poll.
// The pool hears the set's id first; a pool not there yet hears it at a later
// step, and the set's jobs wait for it meanwhile, not its messages.
func (l *listener) step(ctx workflow.Context) {
	s := &l.state
	if s.Held {
		l.closeSession(ctx)
		l.awaitSignal(ctx)
		return
	}
	if s.ScaleSetID == 0 {
		l.ensureSet(ctx)
		return
	}
	if s.PoolTold != s.ScaleSetID {
		l.tellPool(ctx)
	}
	if s.SessionID == "" {
		l.openSession(ctx)
		return
	}
	l.poll(ctx)
}

func (l *listener) ensureSet(ctx workflow.Context) {
	s := &l.state
	spec := s.Spec
	var out calls.EnsureScaleSetOutput
	in := calls.EnsureScaleSetInput{Scope: spec.Scope, Name: spec.Name, RunnerGroup: spec.RunnerGroup, Labels: spec.Labels}
	if err := workflow.ExecuteActivity(scaleSetCallOptions(ctx), calls.EnsureScaleSet, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Error("scale set not found or created; trying again", "scaleSet", spec.Name, "error", err)
		l.pause(ctx, sessionConflictMaxWait)
		return
	}
	if out.Created {
		workflow.GetLogger(ctx).Info("scale set created", "scaleSet", spec.Name, "id", out.ID)
	}
	s.ScaleSetID, s.RunnerGroupID = out.ID, out.RunnerGroupID
}

// setGone starts over with the set: the service deleted it (after days
// offline), so its queue, session and cursor went with it.
func (l *listener) setGone(ctx workflow.Context) {
	s := &l.state
	workflow.GetLogger(ctx).Warn("scale set deleted by the service; finding or recreating it", "scaleSet", s.Spec.Name, "id", s.ScaleSetID)
	s.ScaleSetID, s.SessionID, s.LastMessageID, s.Unacked = 0, "", 0, 0
}

// tellPool gives the pool its runners' set id.
func (l *listener) tellPool(ctx workflow.Context) {
	s := &l.state
	pool := contract.PoolWorkflowID(s.Spec.Namespace, s.Spec.Kind, s.Spec.Pool)
	told := contract.ScaleSetID{ID: s.ScaleSetID, Name: s.Spec.Name}
	if err := workflow.SignalExternalWorkflow(ctx, pool, "", contract.SignalScaleSetID, told).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("pool not told its scale set yet", "pool", pool, "error", err)
		return
	}
	s.PoolTold = s.ScaleSetID
}

func (l *listener) openSession(ctx workflow.Context) {
	s := &l.state
	var out calls.OpenScaleSetSessionOutput
	in := calls.OpenScaleSetSessionInput{Set: l.ref(), Owner: workflow.GetInfo(ctx).WorkflowExecution.ID, Stale: s.LostSession}
	opts := scaleSetCallOptions(ctx)
	if s.HeldBy != "" && s.ConflictInActivity {
		in.WaitOnConflict = sessionConflictActivityWait
		opts = conflictWaitOptions(ctx)
	}
	began := workflow.Now(ctx)
	if err := workflow.ExecuteActivity(opts, calls.OpenScaleSetSession, in).Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Error("scale set session not opened; trying again", "scaleSet", s.Spec.Name, "error", err)
		l.pause(ctx, sessionConflictMaxWait)
		return
	}
	switch {
	case out.SetGone:
		l.setGone(ctx)
	case out.Conflict:
		s.LostSession = "" // deleted, or the service has no such session
		first := s.HeldBy == ""
		s.HeldBy = out.Holder
		if s.HeldBy == "" {
			s.HeldBy = "another session"
		}
		if first {
			workflow.GetLogger(ctx).Info("scale set has another session; waiting", "scaleSet", s.Spec.Name, "holder", out.Holder)
		}
		l.reportSession(ctx)
		waited := workflow.Now(ctx).Sub(began)
		if l.conflictWaitsInActivity(ctx) && (in.WaitOnConflict == 0 || waited >= in.WaitOnConflict/2) {
			// The next open waits in its activity, trying every few seconds.
			// One that came back at once (a worker from before
			// WaitOnConflict) waits on a timer, so the listener never spins.
			return
		}
		wait := max(s.ConflictWait, sessionConflictFirstWait)
		s.ConflictWait = min(2*wait, sessionConflictMaxWait)
		l.pause(ctx, wait)
	default:
		s.SessionID, s.ConflictWait, s.LostSession, s.HeldBy = out.SessionID, 0, "", ""
		// GitHub's clients acquire only what the statistics say is available.
		s.AcquireListed = out.Statistics.Available > 0
		s.Statistics = out.Statistics
		l.sendDemand(ctx, 0, nil)
		l.reportSession(ctx)
	}
}

// poll waits for the next message while a delete may come; the message is
// recorded before the next poll deletes it.
func (l *listener) poll(ctx workflow.Context) {
	s := &l.state
	pollCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	in := calls.PollScaleSetInput{
		Set: l.ref(), SessionID: s.SessionID, LastMessageID: s.LastMessageID, AckMessageID: s.Unacked,
		MaxCapacity: s.Spec.MaxRunners, MaxWait: s.Spec.PollMaxWait, AcquireListed: s.AcquireListed,
		Name: s.Spec.Name, Namespace: s.Spec.Namespace, MinRunners: s.Spec.MinRunners, Statistics: s.Statistics,
	}
	s.Polls++
	l.polling, l.lost = fmt.Sprintf("poll-%d", s.Polls), false
	defer func() { l.polling = "" }()
	future := workflow.ExecuteActivity(pollOptions(pollCtx, s.Spec, l.polling), calls.PollScaleSet, in)
	var out calls.PollScaleSetOutput
	var pollErr error
	done := false
	for !done && !s.Deleting && !s.Held && !l.lost && !l.movedOn(ctx, in) && !l.capacityChanged(ctx, in) {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(future, func(f workflow.Future) { pollErr, done = f.Get(ctx, &out), true })
		l.listen(ctx, sel)
		sel.Select(ctx)
	}
	if !done {
		// Deleting or held: the poll is abandoned, the session closed after. Lost:
		// its worker is gone; the next step polls again with the same cursor
		// and the same message to delete. Moved on: what it brings belongs to
		// a set or session the listener left. Capacity changed: the next poll
		// tells the service the new one (canceling this one loses nothing: a
		// message it got is deleted by no one, and comes again).
		return
	}
	if pollErr != nil {
		workflow.GetLogger(ctx).Error("scale set poll failed; trying again", "scaleSet", s.Spec.Name, "error", pollErr)
		l.pause(ctx, sessionConflictFirstWait)
		return
	}
	s.AcquireListed = false
	if in.AckMessageID == s.Unacked {
		s.Unacked = 0 // the poll deleted it
	}
	switch {
	case out.SetGone:
		l.setGone(ctx)
	case out.SessionLost:
		workflow.GetLogger(ctx).Warn("scale set session lost; opening another", "scaleSet", s.Spec.Name)
		s.SessionID, s.LostSession = "", s.SessionID
	case out.Message != nil:
		l.record(ctx, *out.Message)
	}
}

// pollsLeftBehindVersion marks listeners that abandon a poll whose set or
// session a spec change left (a renamed set): before it, the poll's message
// was recorded against the new set, its cursor carried over to a queue it does
// not belong to.
const pollsLeftBehindVersion = "scaleset-polls-left-behind"

// movedOn says whether the listener left the set or session of a running poll.
// The version is asked only when it did, so histories without a change mid-poll
// carry no marker.
func (l *listener) movedOn(ctx workflow.Context, in calls.PollScaleSetInput) bool {
	s := &l.state
	if s.ScaleSetID == in.Set.ID && s.SessionID == in.SessionID {
		return false
	}
	return workflow.GetVersion(ctx, pollsLeftBehindVersion, workflow.DefaultVersion, 1) >= 1
}

// listen adds the spec and delete signals to sel.
func (l *listener) listen(ctx workflow.Context, sel workflow.Selector) {
	sel.AddReceive(l.specs, func(c workflow.ReceiveChannel, _ bool) {
		var spec ScaleSetSpec
		c.Receive(ctx, &spec)
		l.onSpec(ctx, spec)
	})
	sel.AddReceive(l.deletes, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		l.state.Deleting = true
	})
	sel.AddReceive(l.lostPolls, func(c workflow.ReceiveChannel, _ bool) {
		var lost contract.PollLost
		c.Receive(ctx, &lost)
		l.onPollLost(ctx, lost)
	})
	sel.AddReceive(l.holds, func(c workflow.ReceiveChannel, _ bool) {
		var hold contract.Hold
		c.Receive(ctx, &hold)
		l.onHold(ctx, hold)
	})
}

func (l *listener) onHold(ctx workflow.Context, hold contract.Hold) {
	if hold.Held != l.state.Held {
		workflow.GetLogger(ctx).Info("scale set listener hold changed", "scaleSet", l.state.Spec.Name, "held", hold.Held)
	}
	l.state.Held = hold.Held
}

// onPollLost abandons the running poll when it is the one whose worker died;
// a late word of an older poll changes nothing.
func (l *listener) onPollLost(ctx workflow.Context, lost contract.PollLost) {
	if lost.ActivityID == "" || lost.ActivityID != l.polling {
		return
	}
	workflow.GetLogger(ctx).Warn("scale set poll's worker is gone; polling again", "scaleSet", l.state.Spec.Name, "worker", lost.Worker)
	l.lost = true
}

func (l *listener) onSpec(ctx workflow.Context, spec ScaleSetSpec) {
	s := &l.state
	if spec.Generation != 0 && spec.Generation < s.Spec.Generation {
		return
	}
	old := s.Spec
	s.Spec = spec.withDefaults()
	if old.Name != spec.Name || old.RunnerGroup != spec.RunnerGroup || old.Scope != spec.Scope {
		l.closeSession(ctx)
		s.ScaleSetID, s.LastMessageID, s.Unacked = 0, 0, 0
		return
	}
	if old.Autoscaler != spec.Autoscaler && spec.Autoscaler != "" {
		l.sendDemand(ctx, s.LastMessageID, nil)
	}
}

func (l *listener) drainSignals(ctx workflow.Context) {
	for {
		var spec ScaleSetSpec
		var hold contract.Hold
		switch {
		case l.specs.ReceiveAsync(&spec):
			l.onSpec(ctx, spec)
		case l.deletes.ReceiveAsync(nil):
			l.state.Deleting = true
		case l.lostPolls.ReceiveAsync(nil):
		case l.holds.ReceiveAsync(&hold):
			l.onHold(ctx, hold)
		default:
			return
		}
	}
}

// awaitSignal waits for the next signal, with no timer: a held listener
// costs nothing while it waits.
func (l *listener) awaitSignal(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	l.listen(ctx, sel)
	sel.Select(ctx)
}

// pause waits d on a timer, or until a signal comes.
func (l *listener) pause(ctx workflow.Context, d time.Duration) {
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(timerCtx, d), func(workflow.Future) {})
	l.listen(ctx, sel)
	sel.Select(ctx)
}

// closeSession deletes the session, so another listener may take the set.
func (l *listener) closeSession(ctx workflow.Context) {
	s := &l.state
	if s.SessionID == "" || s.ScaleSetID == 0 {
		return
	}
	in := calls.CloseScaleSetSessionInput{Set: l.ref(), SessionID: s.SessionID}
	if err := workflow.ExecuteActivity(scaleSetCallOptions(ctx), calls.CloseScaleSetSession, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("scale set session not closed; it expires by itself", "scaleSet", s.Spec.Name, "error", err)
	}
	s.SessionID = ""
}

func (l *listener) ref() calls.ScaleSetRef {
	return calls.ScaleSetRef{Scope: l.state.Spec.Scope, ID: l.state.ScaleSetID}
}

// scaleSetCallOptions: the Actions service calls other than the poll.
func scaleSetCallOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		HeartbeatTimeout:    ActivityHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
}

// pollOptions: the poll heartbeats (the worker's interceptor does it), so a
// dead worker's poll goes to another after the heartbeat timeout.
func pollOptions(ctx workflow.Context, spec ScaleSetSpec, activityID string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          activityID,
		TaskQueue:           contract.PollTaskQueue,
		StartToCloseTimeout: spec.PollMaxWait + 5*time.Minute,
		HeartbeatTimeout:    spec.PollHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 3},
	})
}

var errNoAutoscaler = errors.New("no autoscaler scales the pool yet")
