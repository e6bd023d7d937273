package workflows

// Spill-over (beyond ARC): when several HRAs match a job, the webhook sends it to
// the first and names the others in JobEvent.Overflow. An autoscaler whose pool
// is at maxReplicas does not queue the job behind its busy runners: it passes the
// job to the next autoscaler, remembers where it went, and sends the job's
// completion after it, so the reservation is released where it was made.

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/workflows/contract"
)

// spilledMemory is how long a passed-on job is remembered beyond its
// reservation's duration, for a completion that comes late.
const spilledMemory = time.Hour

// SpilledJob is a queued job this autoscaler passed on.
type SpilledJob struct {
	// To is the autoscaler workflow that took the job.
	To    string
	Until time.Time
}

// Forward is a job event on its way to another autoscaler.
type Forward struct {
	To    string
	Event contract.JobEvent
}

// applyJob records one job event: a completion of a job passed on follows it; a
// queued job that would wait for a slot here goes to the next autoscaler that
// matches it; everything else is a reservation here.
func (a *autoscalerRun) applyJob(ctx workflow.Context, ev contract.JobEvent, now time.Time) {
	s := &a.state
	a.noteFinished(ctx, ev)
	a.noteStart(ev)
	if spilled, ok := s.Spilled[ev.JobID]; ok {
		if ev.Action != "queued" { // a start or the end: its runner is of the pool the job went to
			ev.Overflow = nil
			s.Outbox = append(s.Outbox, Forward{To: spilled.To, Event: ev})
		}
		if ev.Action == "completed" {
			delete(s.Spilled, ev.JobID)
		}
		return // a repeated queued event
	}
	if ev.Action == "in_progress" {
		a.markStarted(ev.JobID, now)
		a.noteRunning(ev) // it reserves nothing
		return
	}
	if ev.Action == "queued" && len(ev.Overflow) > 0 && !s.Reservations.Knows(ev) && a.atMax(now) {
		if s.Spilled == nil {
			s.Spilled = map[int64]SpilledJob{}
		}
		s.Spilled[ev.JobID] = SpilledJob{To: ev.Overflow[0], Until: now.Add(s.Spec.TriggerDuration + spilledMemory)}
		s.Outbox = append(s.Outbox, passOn(ev))
		return
	}
	if a.releasesImportedCapacity(ev, now) {
		a.releaseImportedCapacity(now)
	}
	if s.Reservations.Apply(ev, now, s.Spec.TriggerDuration) && ev.Action == "queued" {
		a.noteArrival(now)
	}
}

// passOn addresses a queued job to the first autoscaler of its overflow, which
// may pass it on to the rest.
func passOn(ev contract.JobEvent) Forward {
	to := ev.Overflow[0]
	ev.Overflow = ev.Overflow[1:]
	return Forward{To: to, Event: ev}
}

// atMax reports whether this pool already has every runner maxReplicas allows
// spoken for, so one more job would only queue.
func (a *autoscalerRun) atMax(now time.Time) bool {
	s := &a.state
	var boundaries []time.Time
	need := a.minReplicas(now) + len(s.Reservations.Active) + manualReservations(s.Spec, s.ReleasedCapacity, now, &boundaries)
	if s.Suggested != nil {
		need = max(need, *s.Suggested)
	}
	return need >= s.Spec.Max
}

// sendForwards delivers the outbox, one signal per autoscaler. A queued job
// whose autoscaler is gone tries the next one, and is reserved here when none is
// left; a completion whose autoscaler is gone has nothing left to release.
func (a *autoscalerRun) sendForwards(ctx workflow.Context) {
	s := &a.state
	for len(s.Outbox) > 0 {
		batch := s.Outbox
		s.Outbox = nil
		var order []string
		events := map[string][]contract.JobEvent{}
		for _, f := range batch {
			if _, seen := events[f.To]; !seen {
				order = append(order, f.To)
			}
			events[f.To] = append(events[f.To], f.Event)
		}
		sent := make([]workflow.Future, len(order))
		for i, to := range order {
			if evs := events[to]; len(evs) == 1 {
				sent[i] = workflow.SignalExternalWorkflow(ctx, to, "", contract.SignalJob, evs[0])
			} else {
				sent[i] = workflow.SignalExternalWorkflow(ctx, to, "", contract.SignalJobs, evs)
			}
		}
		now := workflow.Now(ctx)
		for i, to := range order {
			err := sent[i].Get(ctx, nil)
			if err == nil {
				workflow.GetLogger(ctx).Info("jobs passed on", "hra", s.Spec.Name, "to", to, "events", len(events[to]))
				continue
			}
			workflow.GetLogger(ctx).Warn("cannot pass jobs on", "hra", s.Spec.Name, "to", to, "error", err)
			for _, ev := range events[to] {
				switch {
				case ev.Action != "queued":
				case len(ev.Overflow) > 0:
					s.Spilled[ev.JobID] = SpilledJob{To: ev.Overflow[0], Until: s.Spilled[ev.JobID].Until}
					s.Outbox = append(s.Outbox, passOn(ev))
				default:
					delete(s.Spilled, ev.JobID)
					s.Reservations.Apply(ev, now, s.Spec.TriggerDuration)
				}
			}
		}
	}
}

// forgetSpilled drops the passed-on jobs whose completion is overdue.
func (a *autoscalerRun) forgetSpilled(now time.Time) {
	for id, spilled := range a.state.Spilled {
		if now.After(spilled.Until) {
			delete(a.state.Spilled, id)
		}
	}
}
