package world

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTrackPeakKeepsTheHighestSample(t *testing.T) {
	var value, sampled atomic.Int64
	stop := TrackPeak(context.Background(), time.Millisecond, func() int {
		v := value.Load()
		sampled.Store(v)
		return int(v)
	})
	value.Store(3)
	require.Eventually(t, func() bool { return sampled.Load() == 3 }, time.Second, time.Millisecond, "3 sampled")
	value.Store(1)
	require.Eventually(t, func() bool { return sampled.Load() == 1 }, time.Second, time.Millisecond, "1 sampled")
	require.Equal(t, 3, stop(), "a later, lower count does not lower the peak")
}
