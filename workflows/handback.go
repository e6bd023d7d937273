package workflows

// Going back to ARC. ARC's controller scales an HRA's target for the
// capacityReservations in its spec, and ARC has no reconcile for webhooks it
// did not get: a job queued while a drain holds arcflow's autoscaler at 0
// would wait for GitHub's 24-hour timeout once ARC is in charge. So a drain
// hands the queued jobs back in ARC's own form, one entry per job, as ARC's
// webhook server writes them (one replica, effective when written, expiring
// when arcflow's reservation would), named after the job (calls.HandBackName):
//
//   - `arcflow drain` writes the queued jobs each autoscaler's state query
//     lists into its HRA as it holds it;
//   - the held autoscaler (ForceScale.HandBack, which drain sets) writes every
//     job queued after that itself, in the decision that reserves it (an
//     activity), removes the entry of a job that completes or whose
//     reservation expires, writes again one that arcflow still holds when
//     ARC's copy expires (a reconcile found it still queued, or it waited
//     beyond maxReplicas), and removes all it wrote when the hold ends
//     (`arcflow drain --undo`).
//
// Why the autoscaler, and not drain alone, hands back what comes later: drain
// returns once arcflow's runners are gone, and a job that reaches arcflow's
// webhook after that and before GitHub's webhook points at ARC's webhook
// server would have nobody to hand it back; the autoscaler that reserves it
// is there for as long as arcflow's worker runs. Why not the webhook answering
// with an error instead: GitHub does not redeliver a failed delivery.

import (
	"slices"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// handBackVersion marks autoscalers that note their jobs' starts
// (Reservation.Started), hand their queued jobs back to ARC while a drain
// holds them, and leave their own handed-back entries out of the HRA's
// capacityReservations they count. Each run asks once, at its start.
const handBackVersion = "hand-back-to-arc"

// handBackRetry is how long a failed hand-back waits before the next try;
// handBackForbiddenRetry when the worker's RBAC refused it, which only an
// operator mends.
const (
	handBackRetry          = 30 * time.Second
	handBackForbiddenRetry = 5 * time.Minute
)

// QueuedForARC are the reservations a drain hands back to ARC: those of jobs
// still queued (no in_progress delivery told their start), unexpired at now,
// in the order of the book (by effective time).
func QueuedForARC(s *AutoscalerState, now time.Time) []Reservation {
	var queued []Reservation
	for _, r := range s.Reservations.Active {
		if !r.Started && r.ExpirationTime.After(now) {
			queued = append(queued, r)
		}
	}
	return queued
}

// InARCForm is r as ARC's webhook server writes a reservation: one replica,
// effective at (when it is written: ARC's controller holds back a new
// ephemeral runner for up to 10 minutes after its last one unless a
// reservation's effectiveTime is newer), expiring when r does, named after
// its job so that writing it again changes nothing.
func (r Reservation) InARCForm(at time.Time) v1alpha1.CapacityReservation {
	return v1alpha1.CapacityReservation{
		Name: calls.HandBackName(r.JobID), EffectiveTime: metav1.NewTime(at), ExpirationTime: metav1.NewTime(r.ExpirationTime), Replicas: 1,
	}
}

// withoutHandedBack leaves out the entries arcflow wrote when it handed its
// own reservations back: counting them would count those jobs twice.
func withoutHandedBack(entries []v1alpha1.CapacityReservation) []v1alpha1.CapacityReservation {
	if !slices.ContainsFunc(entries, func(r v1alpha1.CapacityReservation) bool { return calls.HandedBack(r.Name) }) {
		return entries
	}
	return slices.DeleteFunc(slices.Clone(entries), func(r v1alpha1.CapacityReservation) bool { return calls.HandedBack(r.Name) })
}

// markStarted notes that a job started (its in_progress delivery, or a
// reconcile that found it running): a drain does not hand it back. A start
// heard before the job's queued delivery (a job an idle runner took at once)
// is remembered for the reservation that delivery makes.
func (a *autoscalerRun) markStarted(jobID int64, now time.Time) {
	if !a.handBack {
		return
	}
	r := &a.state.Reservations
	if i := r.index(jobID); i >= 0 {
		r.Active[i].Started = true
		return
	}
	if _, completed := r.EarlyCompletions[jobID]; completed {
		return
	}
	if r.EarlyStarts == nil {
		r.EarlyStarts = map[int64]time.Time{}
	}
	r.EarlyStarts[jobID] = now
}

// handingBack: a drain holds the autoscaler and hands its jobs to ARC.
func (s *AutoscalerState) handingBack(now time.Time) bool {
	return s.Force != nil && s.Force.HandBack && now.Before(s.Force.Until)
}

// handBackToARC brings the HRA's handed-back entries in line with the queued
// jobs while a drain holds the autoscaler, and removes them all once it no
// longer does. It returns when to look again: a failed write's retry, or the
// earliest expiry of an entry written (to write it again if arcflow still
// holds the job then, or to remove it).
func (a *autoscalerRun) handBackToARC(ctx workflow.Context, now time.Time) time.Time {
	s := &a.state
	holding := s.handingBack(now)
	if !a.handBack || (!holding && len(s.HandedBack) == 0) {
		return time.Time{}
	}
	in := calls.HandBackInput{Namespace: s.Spec.Namespace, Name: s.Spec.Name}
	var added []Reservation
	if holding {
		for _, r := range QueuedForARC(s, now) {
			if written, ok := s.HandedBack[r.JobID]; ok && written.After(now) {
				continue
			}
			added = append(added, r)
			in.Add = append(in.Add, r.InARCForm(now))
		}
	}
	active := map[int64]bool{}
	for _, r := range s.Reservations.Active {
		active[r.JobID] = true
	}
	var removed []int64
	for _, id := range sortedJobIDs(s.HandedBack) {
		if !holding || !active[id] {
			removed = append(removed, id)
			in.Remove = append(in.Remove, calls.HandBackName(id))
		}
	}
	if len(in.Add) > 0 || len(in.Remove) > 0 {
		var out calls.HandBackOutput
		if err := workflow.ExecuteActivity(handBackOptions(ctx), calls.HandBackReservations, in).Get(ctx, &out); err != nil {
			retry := handBackRetry
			if calls.IsErrorType(err, calls.ErrTypeForbidden) {
				retry = handBackForbiddenRetry
			}
			workflow.GetLogger(ctx).Warn("cannot hand queued jobs back to ARC; trying again", "hra", s.Spec.Name,
				"add", len(in.Add), "remove", len(in.Remove), "retry_in", retry, "error", err)
			return workflow.Now(ctx).Add(retry)
		}
		workflow.GetLogger(ctx).Info("handed queued jobs back to ARC", "hra", s.Spec.Name, "added", out.Added, "removed", out.Removed)
		a.handedBack(added, removed)
	}
	var next time.Time
	for _, written := range s.HandedBack {
		if written.After(now) && (next.IsZero() || written.Before(next)) {
			next = written
		}
	}
	return next
}

// handedBack records what a hand-back wrote: each entry added until its
// expiry, the removed ones no longer.
func (a *autoscalerRun) handedBack(added []Reservation, removed []int64) {
	s := &a.state
	for _, id := range removed {
		delete(s.HandedBack, id)
	}
	for _, r := range added {
		if s.HandedBack == nil {
			s.HandedBack = map[int64]time.Time{}
		}
		s.HandedBack[r.JobID] = r.ExpirationTime
	}
	if len(s.HandedBack) == 0 {
		s.HandedBack = nil
	}
}

func sortedJobIDs(m map[int64]time.Time) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// handBackOptions retry a hand-back briefly: a decision waits for it, and the
// next decision tries again (handBackRetry).
func handBackOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		HeartbeatTimeout:    ActivityHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second, MaximumAttempts: 3},
	})
}
