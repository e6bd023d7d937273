package simworld

import (
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
