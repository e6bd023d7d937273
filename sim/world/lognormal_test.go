package world

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

func TestLogNormalDurationsHaveTheGivenMedianAndP95(t *testing.T) {
	l := LogNormalDurations{Median: 2 * time.Minute, P95: 15 * time.Minute, Seed: 25}
	const n = 100_000
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = l.Of(fakegithub.JobInfo{ID: int64(i + 1)})
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	near := func(got, want time.Duration, tol float64) bool {
		return math.Abs(float64(got-want))/float64(want) <= tol
	}
	if got := d[n/2]; !near(got, 2*time.Minute, 0.02) {
		t.Errorf("median %v, want 2m", got)
	}
	if got := d[n*95/100]; !near(got, 15*time.Minute, 0.03) {
		t.Errorf("p95 %v, want 15m", got)
	}
	if s := l.Sigma(); math.Abs(s-1.2249) > 0.001 {
		t.Errorf("sigma %.4f, want ln(7.5)/1.645 = 1.2249", s)
	}
}

func TestLogNormalDurationsAreFixedPerJobCappedAndScaled(t *testing.T) {
	l := LogNormalDurations{Median: 2 * time.Minute, P95: 15 * time.Minute, Cap: time.Hour, TimeScale: 10, Seed: 25}
	job := fakegithub.JobInfo{ID: 42}
	if a, b := l.Of(job), l.Of(job); a != b {
		t.Errorf("job 42 drew %v, then %v", a, b)
	}
	if got := l.At(0); got != 12*time.Second {
		t.Errorf("median scaled by 10: %v, want 12s", got)
	}
	if got := l.At(10); got != 6*time.Minute {
		t.Errorf("a 10-sigma job: %v, want the 1 h cap scaled by 10, 6m", got)
	}
	// Mean median·e^(σ²/2): 120 s · e^0.75 ≈ 254 s, scaled by 10.
	if got := l.Mean(); math.Abs(got.Seconds()-25.4) > 0.1 {
		t.Errorf("mean %v, want about 25.4s", got)
	}
}
