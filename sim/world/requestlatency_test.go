package world

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRequestLatencyQuantilesAreBucketBounds(t *testing.T) {
	base := RequestLatency{Bounds: []float64{0.001, 0.002, 0.004, 0.008}, Counts: []uint64{5, 5, 5, 5}}
	now := RequestLatency{Bounds: base.Bounds, Counts: []uint64{5, 55, 104, 105}}
	burst := now.Minus(base)
	require.Equal(t, uint64(100), burst.Calls())
	require.Equal(t, 2*time.Millisecond, burst.AtMost(0.5), "50 of 100 took at most 2 ms")
	require.Equal(t, 4*time.Millisecond, burst.AtMost(0.99))
	require.Equal(t, 8*time.Millisecond, burst.AtMost(1))
	require.Zero(t, RequestLatency{}.AtMost(0.99))
}

func TestBoundSaysWhenTheQuantileIsPastTheLargestBucket(t *testing.T) {
	r := RequestLatency{Bounds: []float64{0.5, 1, math.Inf(1)}, Counts: []uint64{90, 98, 100}}
	if got := r.Bound(0.5); got != "≤ 500ms" {
		t.Errorf("p50 %q", got)
	}
	if got := r.Bound(0.99); got != "> 1s" {
		t.Errorf("p99 %q, want > 1s (in the +Inf bucket)", got)
	}
	if got := (RequestLatency{}).Bound(0.99); got != "n/a" {
		t.Errorf("empty %q", got)
	}
}

func TestPlusSumsTheBucketsOfTwoProcesses(t *testing.T) {
	a := RequestLatency{Bounds: []float64{0.5, 1}, Counts: []uint64{3, 4}}
	b := RequestLatency{Bounds: []float64{0.5, 1}, Counts: []uint64{10, 20}}
	sum, err := a.Plus(b)
	require.NoError(t, err)
	require.Equal(t, []uint64{13, 24}, sum.Counts)
	require.Equal(t, []uint64{3, 4}, a.Counts, "a is not changed")
	empty, err := RequestLatency{}.Plus(a)
	require.NoError(t, err)
	require.Equal(t, a, empty)
	_, err = a.Plus(RequestLatency{Bounds: []float64{1}, Counts: []uint64{1}})
	require.Error(t, err)
}
