package world

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The gaps of a Poisson process are exponential: mean 1/rate and a standard
// deviation equal to the mean. Even spacing or a uniform draw fails the second.
func TestPoissonGapsHaveTheRatesMeanAndAnExponentialSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rate := range []float64{0.5, 2, 20} {
		const n = 200_000
		var sum, sumSq float64
		for range n {
			g := PoissonGap(rng, rate).Seconds()
			sum += g
			sumSq += g * g
		}
		mean := sum / n
		sd := math.Sqrt(sumSq/n - mean*mean)
		if want := 1 / rate; math.Abs(mean-want)/want > 0.01 {
			t.Errorf("rate %v: mean gap %.4f s, want %.4f s", rate, mean, want)
		}
		if cv := sd / mean; math.Abs(cv-1) > 0.02 {
			t.Errorf("rate %v: gaps' coefficient of variation %.3f, want 1 (exponential)", rate, cv)
		}
	}
}

// In windows of fixed length, a Poisson process's counts have a variance equal
// to their mean.
func TestPoissonCountsInAWindowHaveVarianceEqualToTheirMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const rate, windows = 5.0, 20_000
	window := 2 * time.Second
	var sum, sumSq float64
	var at time.Duration
	counts := make([]float64, windows)
	for {
		at += PoissonGap(rng, rate)
		i := int(at / window)
		if i >= windows {
			break
		}
		counts[i]++
	}
	for _, c := range counts {
		sum += c
		sumSq += c * c
	}
	mean := sum / windows
	variance := sumSq/windows - mean*mean
	if want := rate * window.Seconds(); math.Abs(mean-want)/want > 0.02 {
		t.Errorf("mean count %.3f per window, want %.1f", mean, want)
	}
	if math.Abs(variance/mean-1) > 0.05 {
		t.Errorf("variance %.3f over mean %.3f = %.3f, want 1", variance, mean, variance/mean)
	}
}

func TestPoissonGapAtRateZeroNeverComes(t *testing.T) {
	if g := PoissonGap(rand.New(rand.NewPCG(1, 1)), 0); g != time.Duration(math.MaxInt64) {
		t.Errorf("gap at rate 0: %v", g)
	}
}
