package workflows

import (
	"sort"
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
)

// Reservation holds one runner for one queued workflow job until the job completes
// or the reservation expires.
type Reservation struct {
	JobID          int64
	EffectiveTime  time.Time
	ExpirationTime time.Time
	// Starved: it waited beyond maxReplicas; its timer restarts once it gets a slot.
	Starved bool `json:",omitempty"`
	// RunID is the job's workflow run, when the delivery named it.
	RunID int64 `json:",omitempty"`
	// Started: the job's in_progress delivery came (or a reconcile found it
	// running), so a drain does not hand it back to ARC (handBackVersion).
	Started bool `json:",omitempty"`
}

// Memory bounds: how long a completion that came before its queued event, and a
// delivery ID, are remembered.
const (
	earlyCompletionMemory   = time.Hour
	deliveryMemory          = time.Hour
	maxDeliveriesRemembered = 10000
)

// Reservations is the autoscaler's book of reservations, keyed by workflow_job ID,
// so duplicated and reordered deliveries change nothing.
type Reservations struct {
	// Active is sorted by EffectiveTime, then JobID.
	Active []Reservation
	// EarlyCompletions: job ID -> when its completion arrived before its queued event.
	EarlyCompletions map[int64]time.Time `json:",omitempty"`
	// Deliveries: delivery ID -> when it was applied.
	Deliveries map[string]time.Time `json:",omitempty"`
	// EarlyStarts: job ID -> when its start was heard before its queued
	// event; the reservation that event makes is Started (handBackVersion).
	EarlyStarts map[int64]time.Time `json:",omitempty"`
}

// Apply records one job event at now; duration is the trigger's reservation length.
// It reports whether anything changed.
func (r *Reservations) Apply(ev contract.JobEvent, now time.Time, duration time.Duration) bool {
	if r.EarlyCompletions == nil {
		r.EarlyCompletions = map[int64]time.Time{}
	}
	if r.Deliveries == nil {
		r.Deliveries = map[string]time.Time{}
	}
	if ev.DeliveryID != "" {
		if _, seen := r.Deliveries[ev.DeliveryID]; seen {
			return false
		}
		r.Deliveries[ev.DeliveryID] = now
	}
	i := r.index(ev.JobID)
	switch ev.Action {
	case "queued":
		if _, done := r.EarlyCompletions[ev.JobID]; done || i >= 0 {
			return false // already completed, or a duplicate
		}
		_, started := r.EarlyStarts[ev.JobID]
		delete(r.EarlyStarts, ev.JobID)
		r.Active = append(r.Active, Reservation{JobID: ev.JobID, EffectiveTime: now, ExpirationTime: now.Add(duration), RunID: ev.RunID, Started: started})
		r.sort()
		return true
	case "completed":
		delete(r.EarlyStarts, ev.JobID)
		if i < 0 {
			r.EarlyCompletions[ev.JobID] = now
			return false
		}
		r.Active = append(r.Active[:i], r.Active[i+1:]...)
		return true
	}
	return false
}

// Knows reports whether ev is a delivery already applied, or concerns a job
// already reserved or completed.
func (r *Reservations) Knows(ev contract.JobEvent) bool {
	_, delivered := r.Deliveries[ev.DeliveryID]
	_, completed := r.EarlyCompletions[ev.JobID]
	return (ev.DeliveryID != "" && delivered) || completed || r.index(ev.JobID) >= 0
}

func (r *Reservations) index(jobID int64) int {
	for i, res := range r.Active {
		if res.JobID == jobID {
			return i
		}
	}
	return -1
}

func (r *Reservations) sort() {
	sort.SliceStable(r.Active, func(i, j int) bool {
		a, b := r.Active[i], r.Active[j]
		if !a.EffectiveTime.Equal(b.EffectiveTime) {
			return a.EffectiveTime.Before(b.EffectiveTime)
		}
		return a.JobID < b.JobID
	})
}

// Expire restarts the timers of reservations queued beyond maxReplicas (they wait
// for a runner, so they must not expire while waiting; seed 000) and once more when
// such a reservation gets a slot, drops expired ones and forgets old memories. It reports whether the active set changed.
func (r *Reservations) Expire(now time.Time, maxReplicas int) bool {
	changed := false
	for i := range r.Active {
		res := &r.Active[i]
		if i < maxReplicas && !res.Starved {
			continue
		}
		length := res.ExpirationTime.Sub(res.EffectiveTime)
		res.EffectiveTime, res.ExpirationTime = now, now.Add(length)
		res.Starved = i >= maxReplicas
	}
	kept := r.Active[:0]
	for _, res := range r.Active {
		if res.ExpirationTime.After(now) {
			kept = append(kept, res)
		} else {
			changed = true
		}
	}
	r.Active = kept
	r.sort()
	for id, at := range r.EarlyCompletions {
		if now.Sub(at) > earlyCompletionMemory {
			delete(r.EarlyCompletions, id)
		}
	}
	for id, at := range r.EarlyStarts {
		if now.Sub(at) > earlyCompletionMemory {
			delete(r.EarlyStarts, id)
		}
	}
	for id, at := range r.Deliveries {
		if now.Sub(at) > deliveryMemory {
			delete(r.Deliveries, id)
		}
	}
	r.trimDeliveries()
	return changed
}

// trimDeliveries keeps the newest maxDeliveriesRemembered delivery IDs.
func (r *Reservations) trimDeliveries() {
	if len(r.Deliveries) <= maxDeliveriesRemembered {
		return
	}
	type entry struct {
		id string
		at time.Time
	}
	entries := make([]entry, 0, len(r.Deliveries))
	for id, at := range r.Deliveries {
		entries = append(entries, entry{id, at})
	}
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].at.Equal(entries[j].at) {
			return entries[i].at.After(entries[j].at)
		}
		return entries[i].id < entries[j].id
	})
	for _, e := range entries[maxDeliveriesRemembered:] {
		delete(r.Deliveries, e.id)
	}
}

// NextExpiry is the earliest expiration among the first maxReplicas reservations
// (the others have their timers restarted), or zero.
func (r *Reservations) NextExpiry(maxReplicas int) time.Time {
	var next time.Time
	for i, res := range r.Active {
		if i >= maxReplicas && maxReplicas > 0 {
			break
		}
		if next.IsZero() || res.ExpirationTime.Before(next) {
			next = res.ExpirationTime
		}
	}
	return next
}

// LatestEffectiveTime is the newest effective time, which the pool compares with
// its last runner creation.
func (r *Reservations) LatestEffectiveTime() time.Time {
	var latest time.Time
	for _, res := range r.Active {
		if res.EffectiveTime.After(latest) {
			latest = res.EffectiveTime
		}
	}
	return latest
}
