package world

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// z95 is the standard normal's 95th percentile.
const z95 = 1.6448536269514722

// LogNormalDurations are job durations drawn from a log-normal distribution
// given by its median and 95th percentile, as CI jobs are: most take minutes,
// a long tail takes much longer (issue 25: median 2 min, p95 15 min). Each job's
// duration is fixed by its ID and Seed, so a rerun draws the same ones.
type LogNormalDurations struct {
	Median, P95 time.Duration
	// Cap bounds a duration before scaling (0: none), as a job timeout does.
	Cap time.Duration
	// TimeScale divides every duration (1 or 0: real time), so a small machine
	// reaches a steady number of runners in minutes; the shape is unchanged.
	TimeScale float64
	Seed      uint64
}

// Sigma is the log-normal's shape: ln(P95/Median) / z95.
func (l LogNormalDurations) Sigma() float64 {
	if l.Median <= 0 || l.P95 <= l.Median {
		return 0
	}
	return math.Log(float64(l.P95)/float64(l.Median)) / z95
}

// Mean is the distribution's mean after scaling, ignoring Cap: median·e^(σ²/2).
func (l LogNormalDurations) Mean() time.Duration {
	s := l.Sigma()
	return l.scaled(float64(l.Median) * math.Exp(s*s/2))
}

// At is the duration at standard normal deviate z, capped and scaled.
func (l LogNormalDurations) At(z float64) time.Duration {
	d := float64(l.Median) * math.Exp(l.Sigma()*z)
	if l.Cap > 0 {
		d = math.Min(d, float64(l.Cap))
	}
	return l.scaled(d)
}

func (l LogNormalDurations) scaled(d float64) time.Duration {
	if l.TimeScale > 0 {
		d /= l.TimeScale
	}
	return time.Duration(d)
}

// Of is how long job runs; a sim.Runners JobDuration.
func (l LogNormalDurations) Of(job fakegithub.JobInfo) time.Duration {
	rng := rand.New(rand.NewPCG(l.Seed, uint64(job.ID)))
	return l.At(rng.NormFloat64())
}
