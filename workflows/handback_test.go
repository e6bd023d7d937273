package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A reservation in ARC's form is what ARC's webhook server writes for one
// queued job: one replica, effective when written, expiring when arcflow's
// reservation would, named after the job.
func TestAReservationInARCsForm(t *testing.T) {
	queued := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	r := Reservation{JobID: 4711, EffectiveTime: queued, ExpirationTime: queued.Add(10 * time.Minute), RunID: 99}
	at := queued.Add(90 * time.Second)
	require.Equal(t, v1alpha1.CapacityReservation{
		Name: "arcflow-job-4711", EffectiveTime: metav1.NewTime(at), ExpirationTime: metav1.NewTime(queued.Add(10 * time.Minute)), Replicas: 1,
	}, r.InARCForm(at))
	require.True(t, calls.HandedBack(r.InARCForm(at).Name))
	require.False(t, calls.HandedBack(""), "ARC's webhook server names none of its entries")
}

// Only jobs still queued go back: not one that started, not one whose
// reservation expired.
func TestOnlyQueuedJobsGoBackToARC(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	s := &AutoscalerState{Reservations: Reservations{Active: []Reservation{
		{JobID: 1, EffectiveTime: now.Add(-time.Minute), ExpirationTime: now.Add(9 * time.Minute)},
		{JobID: 2, EffectiveTime: now.Add(-time.Minute), ExpirationTime: now.Add(9 * time.Minute), Started: true},
		{JobID: 3, EffectiveTime: now.Add(-10 * time.Minute), ExpirationTime: now},
		{JobID: 4, EffectiveTime: now, ExpirationTime: now.Add(10 * time.Minute)},
	}}}
	var ids []int64
	for _, r := range QueuedForARC(s, now) {
		ids = append(ids, r.JobID)
	}
	require.Equal(t, []int64{1, 4}, ids)
}

// arcflow's own handed-back entries are left out of what the autoscaler
// counts; ARC's and the user's are counted as before.
func TestHandedBackEntriesAreNotCountedTwice(t *testing.T) {
	at := newAutoscalerTest(t)
	spec := hraSpec(0, 10)
	from, until := metav1.NewTime(at.start.Add(-time.Minute)), metav1.NewTime(at.start.Add(time.Hour))
	spec.Capacity = []v1alpha1.CapacityReservation{
		{Name: calls.HandBackName(1), EffectiveTime: from, ExpirationTime: until, Replicas: 1},
		{EffectiveTime: from, ExpirationTime: until, Replicas: 1}, // ARC's webhook server's
	}
	at.job(time.Second, "d1", 1, "queued")
	at.env.RegisterDelayedCallback(func() {
		next := spec
		next.Generation = 2
		next.Capacity = append(next.Capacity, v1alpha1.CapacityReservation{Name: calls.HandBackName(2), EffectiveTime: from, ExpirationTime: until, Replicas: 1})
		at.env.SignalWorkflow(contract.SignalSpec, next)
	}, 2*time.Second)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 2, at.last(), "job 1 and ARC's entry") }, 3*time.Second)
	at.finish(4*time.Second, spec)
}

// handBacks records the hand-back activity's calls.
type handBacks struct {
	ins []calls.HandBackInput
	at  []time.Duration
}

func (at *autoscalerTest) recordHandBacks(fail func(calls.HandBackInput) error) *handBacks {
	h := &handBacks{}
	at.env.OnActivity(kube.HandBackReservations, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in calls.HandBackInput) (calls.HandBackOutput, error) {
			if fail != nil {
				if err := fail(in); err != nil {
					return calls.HandBackOutput{}, err
				}
			}
			h.ins = append(h.ins, in)
			h.at = append(h.at, at.env.Now().Sub(at.start))
			return calls.HandBackOutput{Added: len(in.Add), Removed: len(in.Remove)}, nil
		})
	return h
}

// sameSecond: a time in a resource (and in an activity's input) keeps whole
// seconds.
func sameSecond(t *testing.T, want time.Time, got metav1.Time, msg string) {
	t.Helper()
	require.True(t, want.Truncate(time.Second).Equal(got.Time), "%s: want %v, got %v", msg, want, got)
}

func names(entries []v1alpha1.CapacityReservation) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// A drain's hold (force-scale with handBack) hands the queued jobs back to
// ARC, then each job queued later, removes the entry of a job that
// completes, and removes the rest when the hold ends.
func TestAHeldAutoscalerHandsItsJobsBackToARC(t *testing.T) {
	at := newAutoscalerTest(t)
	h := at.recordHandBacks(nil)
	at.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalJobStarted, mock.Anything).Return(nil)
	at.job(time.Second, "q1", 1, "queued")
	at.job(time.Second, "q2", 2, "queued")
	started := func(id int64, runner string) {
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "s" + runner, JobID: id, Action: "in_progress", RunnerName: runner, RunnerID: id * 11})
	}
	at.env.RegisterDelayedCallback(func() { started(2, "app-r2") }, 2*time.Second)
	// Job 4 went to an idle runner at once: its start is heard before its queued delivery.
	at.env.RegisterDelayedCallback(func() { started(4, "app-r4") }, 3*time.Second)
	at.job(4*time.Second, "q4", 4, "queued")
	at.env.RegisterDelayedCallback(func() {
		require.Empty(t, h.ins, "nothing goes back before a drain")
		at.env.SignalWorkflow(contract.SignalForceScale, ForceScale{Replicas: 0, Duration: "87600h", HandBack: true})
	}, 10*time.Second)
	at.job(20*time.Second, "q3", 3, "queued")
	at.job(30*time.Second, "c1", 1, "completed")
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 0, at.last(), "held at 0 while handed back") }, 35*time.Second)
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalForceScale, ForceScale{Replicas: 0, Duration: "1s"}) // drain --undo
	}, 40*time.Second)
	spec := hraSpec(0, 10)
	spec.TriggerDuration = 10 * time.Minute
	at.finish(50*time.Second, spec)

	require.Len(t, h.ins, 4, "%+v", h.ins)
	require.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, 40 * time.Second}, h.at, "each in the decision that changes it")
	first := h.ins[0]
	require.Equal(t, "ci", first.Namespace)
	require.Equal(t, "app", first.Name)
	require.Equal(t, []string{"arcflow-job-1"}, names(first.Add), "jobs 2 and 4 started: they stay")
	sameSecond(t, at.start.Add(10*time.Second), first.Add[0].EffectiveTime, "effective when written")
	sameSecond(t, at.start.Add(time.Second+10*time.Minute), first.Add[0].ExpirationTime, "expires with arcflow's reservation")
	require.Equal(t, 1, first.Add[0].Replicas)
	require.Equal(t, []string{"arcflow-job-3"}, names(h.ins[1].Add), "a job queued after the drain goes back too")
	require.Empty(t, h.ins[1].Remove)
	require.Equal(t, calls.HandBackInput{Namespace: "ci", Name: "app", Remove: []string{"arcflow-job-1"}}, h.ins[2], "job 1 completed")
	require.Equal(t, calls.HandBackInput{Namespace: "ci", Name: "app", Remove: []string{"arcflow-job-3"}}, h.ins[3], "the hold ended")
	require.Equal(t, 3, at.last(), "after --undo arcflow runs its jobs again: 2 and 4 (started) and 3")
}

// A hand-back that fails is tried again; an entry of a job arcflow still
// holds when ARC's copy expires (it waited beyond maxReplicas) is written
// again with the new expiry.
func TestAHandBackIsRetriedAndRenewed(t *testing.T) {
	at := newAutoscalerTest(t)
	failures := 3 // every attempt of the first write
	h := at.recordHandBacks(func(calls.HandBackInput) error {
		if failures > 0 {
			failures--
			return errors.New("the API server is away")
		}
		return nil
	})
	spec := hraSpec(0, 1)
	spec.TriggerDuration = 10 * time.Minute
	at.job(time.Second, "q1", 1, "queued")
	at.job(time.Second, "q2", 2, "queued") // beyond max 1: its timer restarts while it waits
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalForceScale, ForceScale{Replicas: 0, Duration: "87600h", HandBack: true})
	}, 10*time.Second)
	at.finish(25*time.Minute, spec)

	require.GreaterOrEqual(t, len(h.ins), 2, "%+v", h.ins)
	require.Equal(t, []string{"arcflow-job-1", "arcflow-job-2"}, names(h.ins[0].Add))
	require.GreaterOrEqual(t, h.at[0], 10*time.Second+handBackRetry, "the failed write was tried again at a later decision")
	var renewed bool
	for i, in := range h.ins[1:] {
		if len(in.Add) == 1 && in.Add[0].Name == "arcflow-job-2" {
			renewed = true
			require.Greater(t, in.Add[0].ExpirationTime.Time, h.ins[0].Add[1].ExpirationTime.Time, "a later expiry")
			sameSecond(t, at.start.Add(h.at[i+1]), in.Add[0].EffectiveTime, "effective when written again")
		}
	}
	require.True(t, renewed, "job 2 written again when ARC's copy expired: %+v", h.ins)
}
