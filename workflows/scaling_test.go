package workflows

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

func jobIDs(r *Reservations) []int64 {
	var ids []int64
	for _, res := range r.Active {
		ids = append(ids, res.JobID)
	}
	return ids
}

func TestReservations(t *testing.T) {
	d := 10 * time.Minute
	for _, tc := range []struct {
		name   string
		events []contract.JobEvent
		want   []int64
	}{
		{"queued adds one per job", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d2", JobID: 2, Action: "queued"}}, []int64{1, 2}},
		{"completed removes that job's reservation", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d2", JobID: 2, Action: "queued"}, {DeliveryID: "d3", JobID: 1, Action: "completed"}}, []int64{2}},
		{"a duplicated delivery changes nothing", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d1", JobID: 1, Action: "queued"}}, []int64{1}},
		{"a redelivered queued event for a known job changes nothing", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d9", JobID: 1, Action: "queued"}}, []int64{1}},
		{"completion before its queued event is remembered", []contract.JobEvent{{DeliveryID: "d2", JobID: 1, Action: "completed"}, {DeliveryID: "d1", JobID: 1, Action: "queued"}}, nil},
		{"a completion of another job removes nothing else", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d2", JobID: 7, Action: "completed"}}, []int64{1}},
		{"other actions are ignored", []contract.JobEvent{{DeliveryID: "d1", JobID: 1, Action: "in_progress"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Reservations
			for _, ev := range tc.events {
				r.Apply(ev, t0, d)
			}
			require.Equal(t, tc.want, jobIDs(&r))
		})
	}
}

func TestReservationsExpireAndStarvedOnesRestart(t *testing.T) {
	var r Reservations
	for i := range 4 {
		r.Apply(contract.JobEvent{JobID: int64(i + 1), Action: "queued"}, t0.Add(time.Duration(i)*time.Second), 10*time.Minute)
	}
	require.Equal(t, t0.Add(10*time.Minute), r.NextExpiry(2))

	// Nine minutes on, max 2: the two beyond max get their timers restarted.
	now := t0.Add(9 * time.Minute)
	require.False(t, r.Expire(now, 2))
	require.Equal(t, now.Add(10*time.Minute), r.Active[3].ExpirationTime)
	// At eleven minutes the first two expire; the restarted ones live on.
	require.True(t, r.Expire(t0.Add(11*time.Minute), 2))
	require.ElementsMatch(t, []int64{3, 4}, jobIDs(&r))
	require.Equal(t, t0.Add(11*time.Minute), r.LatestEffectiveTime(), "still beyond max at that moment: restarted again")
}

func TestReservationMemoriesAreBounded(t *testing.T) {
	var r Reservations
	r.Apply(contract.JobEvent{DeliveryID: "old", JobID: 1, Action: "completed"}, t0, time.Minute)
	r.Expire(t0.Add(2*time.Hour), 10)
	require.Empty(t, r.EarlyCompletions)
	require.Empty(t, r.Deliveries)
}

// FuzzReservationsOrderAndDuplicates: however deliveries are duplicated and
// shuffled, the same set of jobs ends up reserved, as long as each completion is
// remembered long enough.
func FuzzReservationsOrderAndDuplicates(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(3))
	f.Add(uint64(42), uint8(50), uint8(20))
	f.Fuzz(func(t *testing.T, seed uint64, jobs, dups uint8) {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var events []contract.JobEvent
		want := map[int64]bool{}
		for j := range int64(jobs % 64) {
			events = append(events, contract.JobEvent{DeliveryID: "q" + string(rune('a'+j)), JobID: j, Action: "queued"})
			if rng.IntN(2) == 0 {
				events = append(events, contract.JobEvent{DeliveryID: "c" + string(rune('a'+j)), JobID: j, Action: "completed"})
			} else {
				want[j] = true
			}
		}
		for range int(dups) % (len(events) + 1) {
			events = append(events, events[rng.IntN(len(events))])
		}
		rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
		var r Reservations
		for i, ev := range events {
			r.Apply(ev, t0.Add(time.Duration(i)*time.Millisecond), time.Hour)
		}
		got := map[int64]bool{}
		for _, id := range jobIDs(&r) {
			require.False(t, got[id], "job %d reserved twice", id)
			got[id] = true
		}
		require.Equal(t, want, got)
	})
}

func TestDesiredReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   DesiredInput
		want DesiredOutput
	}{
		{"webhook only: min plus reservations", DesiredInput{Now: t0, Min: 1, Max: 10, Reserved: 3}, DesiredOutput{Desired: 4, Demand: 4, ScaledOut: true}},
		{"clamped to max", DesiredInput{Now: t0, Min: 0, Max: 5, Reserved: 9}, DesiredOutput{Desired: 5, Demand: 5, ScaledOut: true}},
		{"clamped to min", DesiredInput{Now: t0, Min: 2, Max: 5}, DesiredOutput{Desired: 2, Demand: 2, ScaledOut: true}},
		{"metric and reservations are not added (#1962)", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 3, Suggested: ptr.To(4)}, DesiredOutput{Desired: 4, Demand: 4, ScaledOut: true}},
		{"reservations above the metric win", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 6, Suggested: ptr.To(4)}, DesiredOutput{Desired: 6, Demand: 6, ScaledOut: true}},
		{"held during the scale-down delay", DesiredInput{Now: t0, Min: 0, Max: 10, PreviousDesired: ptr.To(3), LastScaleOut: t0.Add(-time.Minute), ScaleDownDelay: 10 * time.Minute},
			DesiredOutput{Desired: 3, Demand: 0, HoldUntil: t0.Add(9 * time.Minute)}},
		{"drops fully after the delay", DesiredInput{Now: t0, Min: 0, Max: 10, PreviousDesired: ptr.To(3), LastScaleOut: t0.Add(-11 * time.Minute), ScaleDownDelay: 10 * time.Minute},
			DesiredOutput{Desired: 0, Demand: 0}},
		{"scaling out is never held", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 5, PreviousDesired: ptr.To(3), LastScaleOut: t0, ScaleDownDelay: time.Hour},
			DesiredOutput{Desired: 5, Demand: 5, ScaledOut: true}},
		{"an idle buffer on top of the jobs", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 3, IdleRunners: 2}, DesiredOutput{Desired: 5, Demand: 5, ScaledOut: true}},
		{"an idle buffer at rest", DesiredInput{Now: t0, Min: 0, Max: 10, IdleRunners: 2}, DesiredOutput{Desired: 2, Demand: 2, ScaledOut: true}},
		{"an idle buffer on top of a metric", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 3, Suggested: ptr.To(4), IdleRunners: 2}, DesiredOutput{Desired: 6, Demand: 6, ScaledOut: true}},
		{"an idle buffer within max", DesiredInput{Now: t0, Min: 0, Max: 10, Reserved: 9, IdleRunners: 2}, DesiredOutput{Desired: 10, Demand: 10, ScaledOut: true}},
		{"force-scale wins while it lasts", DesiredInput{Now: t0, Min: 0, Max: 3, Reserved: 1, Force: &ForceScale{Replicas: 7, Until: t0.Add(time.Minute)}}, DesiredOutput{Desired: 7, Demand: 7, ScaledOut: true}},
		{"an expired force-scale is ignored", DesiredInput{Now: t0, Min: 0, Max: 3, Reserved: 1, Force: &ForceScale{Replicas: 7, Until: t0}}, DesiredOutput{Desired: 1, Demand: 1, ScaledOut: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, DesiredReplicas(tc.in))
		})
	}
}

func override(start, end time.Time, minReplicas int, freq string, until time.Time) v1alpha1.ScheduledOverride {
	return v1alpha1.ScheduledOverride{
		StartTime: metav1.NewTime(start), EndTime: metav1.NewTime(end), MinReplicas: ptr.To(minReplicas),
		RecurrenceRule: v1alpha1.RecurrenceRule{Frequency: freq, UntilTime: metav1.NewTime(until)},
	}
}

func TestMatchSchedule(t *testing.T) {
	monday := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	weekend := override(monday.Add(-2*24*time.Hour), monday, 0, "Weekly", time.Time{}) // Sat 00:00 - Mon 00:00
	oneOff := override(monday.Add(100*24*time.Hour), monday.Add(101*24*time.Hour), 5, "", time.Time{})

	sat := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	m, err := MatchSchedule([]v1alpha1.ScheduledOverride{weekend, oneOff}, sat)
	require.NoError(t, err)
	require.NotNil(t, m.Active, "every weekend, long after the first")
	require.Equal(t, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), m.ActiveUntil)
	require.Equal(t, "min=0 time=2026-11-28T00:00:00Z", *m.Summary())

	tue := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	m, err = MatchSchedule([]v1alpha1.ScheduledOverride{weekend}, tue)
	require.NoError(t, err)
	require.Nil(t, m.Active)
	require.Equal(t, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), m.NextStart)

	m, err = MatchSchedule([]v1alpha1.ScheduledOverride{oneOff}, monday.Add(100*24*time.Hour+time.Hour))
	require.NoError(t, err)
	require.Equal(t, 5, *m.Active.MinReplicas)

	ended := override(monday.Add(-2*24*time.Hour), monday, 0, "Weekly", monday.Add(7*24*time.Hour))
	m, err = MatchSchedule([]v1alpha1.ScheduledOverride{ended}, sat)
	require.NoError(t, err)
	require.Nil(t, m.Active, "past untilTime")

	first := override(sat.Add(-time.Hour), sat.Add(time.Hour), 3, "", time.Time{})
	second := override(sat.Add(-2*time.Hour), sat.Add(2*time.Hour), 9, "", time.Time{})
	m, err = MatchSchedule([]v1alpha1.ScheduledOverride{first, second}, sat)
	require.NoError(t, err)
	require.Equal(t, 3, *m.Active.MinReplicas, "the first active entry in list order wins")

	_, err = MatchSchedule([]v1alpha1.ScheduledOverride{override(sat, sat.Add(25*time.Hour), 1, "Daily", time.Time{})}, sat)
	require.ErrorContains(t, err, "longer than one Daily period")
}

// FuzzMatchSchedule: whatever the window and instant, an active window contains now
// and the next start lies in the future.
func FuzzMatchSchedule(f *testing.F) {
	f.Add(int64(0), int64(3600), int64(7200), uint8(1))
	f.Add(int64(-86400*30), int64(600), int64(5), uint8(2))
	f.Fuzz(func(t *testing.T, startOffset, length, nowOffset int64, freq uint8) {
		if length <= 0 || length > 86400 {
			return
		}
		freqs := []string{"", "Daily", "Weekly", "Monthly", "Yearly"}
		start := t0.Add(time.Duration(startOffset%(86400*400)) * time.Second)
		now := t0.Add(time.Duration(nowOffset%(86400*400)) * time.Second)
		o := override(start, start.Add(time.Duration(length)*time.Second), 1, freqs[int(freq)%len(freqs)], time.Time{})
		m, err := MatchSchedule([]v1alpha1.ScheduledOverride{o}, now)
		require.NoError(t, err)
		if m.Active != nil {
			require.False(t, now.Before(m.ActiveStart))
			require.True(t, now.Before(m.ActiveUntil))
		}
		if !m.NextStart.IsZero() {
			require.True(t, m.NextStart.After(now))
		}
	})
}
