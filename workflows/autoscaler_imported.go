package workflows

import (
	"sort"
	"time"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// An installation taken over from ARC brings the capacityReservations ARC's
// webhook server wrote into the HRA, one per job it saw queued, without a job
// ID. ARC releases the oldest one when any job completes; arcflow does the
// same for a completion of a job queued before the autoscaler first ran,
// which it cannot have reserved itself. Other unknown completions are early
// ones of jobs whose queued delivery is late, and wait for it as before.

// capacityKey identifies a capacityReservations entry.
func capacityKey(r v1alpha1.CapacityReservation) string {
	return r.Name + "|" + r.EffectiveTime.UTC().Format(time.RFC3339Nano) + "|" + r.ExpirationTime.UTC().Format(time.RFC3339Nano)
}

// releasesImportedCapacity: ev completes a job that no reservation of this
// autoscaler stands for and that was queued before it first ran.
func (a *autoscalerRun) releasesImportedCapacity(ev contract.JobEvent, now time.Time) bool {
	s := &a.state
	if ev.Action != "completed" || ev.QueuedAt.IsZero() || !ev.QueuedAt.Before(s.Since) || s.Reservations.Knows(ev) {
		return false
	}
	return len(s.Spec.Capacity) > 0
}

// releaseImportedCapacity releases one replica of the oldest capacity
// reservation in force that has one left.
func (a *autoscalerRun) releaseImportedCapacity(now time.Time) {
	s := &a.state
	entries := append([]v1alpha1.CapacityReservation(nil), s.Spec.Capacity...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].EffectiveTime.Before(&entries[j].EffectiveTime) })
	for _, r := range entries {
		key := capacityKey(r)
		if now.Before(r.EffectiveTime.Time) || !now.Before(r.ExpirationTime.Time) || s.ReleasedCapacity[key] >= r.Replicas {
			continue
		}
		if s.ReleasedCapacity == nil {
			s.ReleasedCapacity = map[string]int{}
		}
		s.ReleasedCapacity[key]++
		return
	}
}
