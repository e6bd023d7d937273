package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPoissonQuantile(t *testing.T) {
	for _, c := range []struct {
		mean  float64
		limit int
		want  int
	}{
		{0, 10, 0},
		{0.1, 10, 0}, // e^-0.1 = 0.905: nine times in ten no job comes
		{0.2, 10, 1},
		{1, 10, 2},
		{3.41, 20, 6},
		{10, 30, 14},
		{10, 5, 5},          // the limit
		{1000, 2000, 1041},  // e^-1000 underflows: summed in log space
		{1000, 100, 100},    // and stops at the limit
		{1e-9, 10, 0},       // a rate too small to matter
		{50, 1_000_000, 59}, // the limit does not decide the loop
	} {
		require.Equal(t, c.want, poissonQuantile(c.mean, WarmQuantile, c.limit), "Poisson(%v)", c.mean)
	}
}

func TestWarmRunners(t *testing.T) {
	steady := WarmInput{Rate: 1, ReadyTime: 10 * time.Second, Room: 100}
	for _, c := range []struct {
		name string
		edit func(*WarmInput)
		want int
	}{
		{"one job a second, ready in 10 s", func(*WarmInput) {}, 14},
		{"rate 0", func(in *WarmInput) { in.Rate = 0 }, 0},
		{"a quiet pool: one job a minute", func(in *WarmInput) { in.Rate = 1.0 / 60 }, 1},
		{"a slow pool: one job every 2 minutes", func(in *WarmInput) { in.Rate = 1.0 / 120 }, 0},
		{"the same, at least one", func(in *WarmInput) { in.Rate, in.MinOne = 1.0/120, true }, 1},
		{"at least one, at rest", func(in *WarmInput) { in.Rate, in.MinOne, in.Resting = 1.0/120, true, true }, 0},
		{"a step up: four jobs a second", func(in *WarmInput) { in.Rate = 4 }, 48},
		{"a step down: a job every 10 s", func(in *WarmInput) { in.Rate = 0.1 }, 2},
		{"faster runners need fewer", func(in *WarmInput) { in.ReadyTime = time.Second }, 2},
		{"the cap", func(in *WarmInput) { in.Cap = 5 }, 5},
		{"maxReplicas leaves room for 3", func(in *WarmInput) { in.Room = 3 }, 3},
		{"maxReplicas is reached", func(in *WarmInput) { in.Room = 0 }, 0},
		{"jobs beyond maxReplicas", func(in *WarmInput) { in.Room = -4 }, 0},
		{"cap and room: the smaller", func(in *WarmInput) { in.Cap, in.Room = 5, 2 }, 2},
		{"at rest", func(in *WarmInput) { in.Resting = true }, 0},
		{"a scheduled override in force", func(in *WarmInput) { in.Overridden = true }, 0},
		{"the time to ready not known yet", func(in *WarmInput) { in.ReadyTime = 0 }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := steady
			c.edit(&in)
			require.Equal(t, c.want, WarmRunners(in))
		})
	}
}

// arrivals feeds one job every gap from start for n jobs.
func arrivals(a *Arrivals, start time.Time, gap time.Duration, n int) time.Time {
	at := start
	for i := range n {
		at = start.Add(time.Duration(i) * gap)
		a.Arrive(at)
	}
	return at
}

func TestArrivalRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	var lone Arrivals
	lone.Arrive(t0)
	require.Zero(t, lone.Rate, "one job is no rate")

	var young Arrivals
	arrivals(&young, t0, time.Second, 61)
	require.InDelta(t, 1.0, young.Rate, 0.1, "a young pool is not underestimated")

	var burst Arrivals
	arrivals(&burst, t0, 100*time.Millisecond, 10)
	require.Less(t, burst.Rate, 0.4, "ten jobs in a second are a burst, not ten a second")

	var step Arrivals
	last := arrivals(&step, t0, 10*time.Second, 60) // 10 minutes at 0.1/s
	require.InDelta(t, 0.1, step.Rate, 0.02)
	last = arrivals(&step, last.Add(time.Second), time.Second, 240) // then 4 minutes at 1/s
	require.InDelta(t, 1.0, step.Rate, 0.15, "a step up is followed within two time constants")
	arrivals(&step, last.Add(10*time.Second), 10*time.Second, 36) // then 6 minutes at 0.1/s
	require.InDelta(t, 0.1, step.Rate, 0.06, "and a step down, within three")

	var forgotten Arrivals
	last = arrivals(&forgotten, t0, time.Second, 100)
	forgotten.Arrive(last.Add(arrivalForget))
	require.Zero(t, forgotten.Rate, "after a long quiet the count restarts")
	require.True(t, forgotten.Resting(last.Add(arrivalForget+30*time.Second), 30*time.Second))
	require.False(t, forgotten.Resting(last.Add(arrivalForget+29*time.Second), 30*time.Second))
	require.True(t, (&Arrivals{}).Resting(t0, time.Hour), "no job yet is rest")
}

func TestReadyTimePercentile(t *testing.T) {
	require.Zero(t, ReadyTimePercentile(nil))
	s := func(secs ...float64) []time.Duration {
		var out []time.Duration
		for _, v := range secs {
			out = append(out, time.Duration(v*float64(time.Second)))
		}
		return out
	}
	require.Equal(t, 10*time.Second, ReadyTimePercentile(s(10)))
	require.Equal(t, 18*time.Second, ReadyTimePercentile(s(20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)),
		"nearest rank: the 18th of 20")
	require.Equal(t, 30*time.Second, ReadyTimePercentile(s(10, 10, 10, 10, 30)), "one slow runner of five shows")
}

func TestHoldIsTenMeanGapsWithinTheDelayAndTenMinutes(t *testing.T) {
	delay := 30 * time.Second
	for _, c := range []struct {
		rate float64
		want time.Duration
	}{
		{0, delay},                  // no rate: the delay
		{1, delay},                  // 10 s of gaps is shorter than the delay
		{0.025, 400 * time.Second},  // a job every 40 s
		{0.001, maxHold},            // a job every 1,000 s
		{1.0 / 7, 70 * time.Second}, // rounded to the millisecond, not to float noise
	} {
		require.Equal(t, c.want, (&Arrivals{Rate: c.rate}).Hold(delay), "rate %g", c.rate)
	}
}
