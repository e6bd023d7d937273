package workflows

// Warm runners sized from demand (arcflow.dev/idle-runners: auto). A job that
// finds no registered idle runner waits a whole time to ready (pod created ->
// runner registered). Each job that takes a warm runner makes the autoscaler
// create a runner in its place, which is ready after the time to ready T; so a
// buffer of K runners is a base stock with a lead time of T, and the runners
// still starting at any instant are Poisson(λT) for arrivals at rate λ (an
// M/D/∞ queue). K is the 90th percentile of Poisson(λT): nine times in ten the
// jobs that arrive while replacements start find the buffer holding.
//
// The inputs are pure state: λ is a smoothed rate of the autoscaler's queued
// jobs (ArrivalRate), T a high percentile of the pool's recent times to ready
// (ReadyTimePercentile), both updated at workflow.Now, so a replay computes
// the same count.

import (
	"math"
	"slices"
	"time"
)

// WarmQuantile is the chance that the jobs arriving during one time to ready
// all find a warm runner.
const WarmQuantile = 0.9

// WarmInput is everything the warm count depends on.
type WarmInput struct {
	// Rate is the smoothed arrival rate in jobs per second.
	Rate float64
	// ReadyTime is the pool's time to ready; zero while unknown.
	ReadyTime time.Duration
	// Room is how many runners maxReplicas leaves beyond what the jobs need;
	// Cap, when above 0, is the annotation's max=.
	Room, Cap int
	// Resting: no job arrived for the scale-down delay; Overridden: a
	// scheduled override is in force. Either keeps no buffer.
	Resting, Overridden bool
	// MinOne keeps one runner where the quantile keeps none (λT < 0.105):
	// the quantile counts the jobs that come during one time to ready, but a
	// slow pool's next job comes later, and with none warm every one of its
	// jobs waits a whole time to ready. The rest rule (Hold) bounds the cost.
	MinOne bool
}

// WarmRunners is the warm buffer to keep: the WarmQuantile of Poisson(Rate ×
// ReadyTime), and at least one (MinOne), within Room and Cap; 0 at rest,
// under a scheduled override, or before the time to ready is known.
func WarmRunners(in WarmInput) int {
	limit := max(in.Room, 0)
	if in.Cap > 0 {
		limit = min(limit, in.Cap)
	}
	if in.Resting || in.Overridden || in.ReadyTime <= 0 || in.Rate <= 0 || limit == 0 {
		return 0
	}
	// Rounded to a millionth, so the last bits of a float cannot tip a
	// count at a quantile's edge differently on another machine's replay.
	mean := math.Round(in.Rate*in.ReadyTime.Seconds()*1e6) / 1e6
	k := poissonQuantile(mean, WarmQuantile, limit)
	if in.MinOne {
		k = max(k, 1)
	}
	return k
}

// poissonQuantile is the smallest k with P(N <= k) >= p for N ~ Poisson(mean),
// or limit if that k is larger. Terms are summed in log space, as e^-mean
// underflows for a large mean.
func poissonQuantile(mean, p float64, limit int) int {
	if mean <= 0 {
		return 0
	}
	logMean, cdf := math.Log(mean), 0.0
	for k := 0; k < limit; k++ {
		lg, _ := math.Lgamma(float64(k + 1))
		cdf += math.Exp(-mean + float64(k)*logMean - lg)
		if cdf >= p {
			return k
		}
	}
	return limit
}

// Arrival-rate smoothing. The rate is an exponentially weighted count of the
// queued jobs over arrivalTau; a count that is older than arrivalForget weighs
// under 5 % and restarts.
const (
	arrivalTau    = 2 * time.Minute
	arrivalForget = 3 * arrivalTau
	// arrivalMinSpan is the shortest window a young estimate is divided by:
	// a handful of jobs in a few seconds is a burst, not a rate.
	arrivalMinSpan = arrivalTau / 4
)

// Arrivals is the autoscaler's estimate of its pool's arrival rate.
type Arrivals struct {
	// Count is the exponentially weighted count of jobs as of Last, the
	// newest arrival; Since is when the count (re)started.
	Count       float64
	Since, Last time.Time
	// Rate is the jobs per second as of Last: the jobs before it, weighted,
	// over the weight of the time since Since (so a young pool is not
	// underestimated), with the job at Last left out, so one lone job is
	// no rate at all.
	Rate float64
}

// Arrive counts one queued job at now.
func (a *Arrivals) Arrive(now time.Time) {
	gap := now.Sub(a.Last)
	if a.Last.IsZero() || gap >= arrivalForget {
		a.Count, a.Since, a.Last, a.Rate = 1, now, now, 0
		return
	}
	a.Count = a.Count*decay(max(gap, 0)) + 1
	a.Last = now
	span := max(a.Last.Sub(a.Since), arrivalMinSpan)
	a.Rate = (a.Count - 1) / (arrivalTau.Seconds() * (1 - decay(span)))
}

// Resting reports whether no job arrived for delay: the buffer then goes,
// unless jobs still arrive elsewhere in the scope (Hold).
func (a *Arrivals) Resting(now time.Time, delay time.Duration) bool {
	return a.Last.IsZero() || !now.Before(a.Last.Add(delay))
}

// A pool whose jobs come further apart than the scale-down delay would rest
// between them, and its next job would wait a whole time to ready. So while
// jobs still arrive elsewhere in its scope, a buffer outlasts its own jobs by
// holdGaps of its mean gaps between jobs: Poisson gaps are longer than that
// only e^-10 (0.005 %) of the time, and the estimated rate, from a handful of
// a slow pool's jobs, is often twice the true one. maxHold bounds it: a pool
// with a job every minute keeps its runner for 10 minutes after its last.
const (
	holdGaps = 10
	maxHold  = 10 * time.Minute
)

// Hold is how long after its last job a pool keeps its buffer while its scope
// is busy: holdGaps mean gaps, at least delay and at most maxHold; delay
// without a rate.
func (a *Arrivals) Hold(delay time.Duration) time.Duration {
	if a.Rate <= 0 {
		return delay
	}
	gaps := time.Duration(math.Round(holdGaps/a.Rate*1e3)) * time.Millisecond
	return min(max(gaps, delay), maxHold)
}

func decay(d time.Duration) float64 { return math.Exp(-d.Seconds() / arrivalTau.Seconds()) }

// Time-to-ready samples: the pool keeps its newest readySamples and takes the
// ReadyPercentile of them, so one slow node does not set the buffer alone and
// a pool whose image got slower is seen within a few runners.
const (
	readySamples    = 20
	ReadyPercentile = 0.9
)

// ReadyTimePercentile is the nearest-rank ReadyPercentile of samples, or 0.
func ReadyTimePercentile(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	rank := int(math.Ceil(ReadyPercentile*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}
