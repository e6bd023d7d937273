package e2e

import (
	"context"
	"flag"
	"sync"
	"testing"

	"golang.org/x/sync/semaphore"
)

// The tests that run side by side share the machine's CPU. Most of them
// check what arcflow does, whatever the pace; a few check how fast it does it
// (a warm runner takes a job at once), and with five neighbours on two
// saturated cores that speed is the neighbours', not arcflow's. Each test
// therefore takes a share of the -parallel slots for its whole length: one
// for most, more for a test that measures latency, so that fewer tests run
// beside it.

var (
	slotsOnce sync.Once
	slots     *semaphore.Weighted
	slotCount int64
)

// parallel runs the test side by side with the others (t.Parallel) and holds
// one slot while it runs.
func parallel(t *testing.T) { parallelWithRoom(t, 1) }

// parallelWithRoom is parallel for a test that measures latency: it holds
// share slots (at most all of them), so that only -parallel minus share
// others run beside it.
func parallelWithRoom(t *testing.T, share int64) {
	t.Helper()
	t.Parallel()
	slotsOnce.Do(func() {
		slotCount = 1
		if f := flag.Lookup("test.parallel"); f != nil {
			if n, ok := f.Value.(flag.Getter).Get().(int); ok && n > 0 {
				slotCount = int64(n)
			}
		}
		slots = semaphore.NewWeighted(slotCount)
	})
	share = min(share, slotCount)
	if err := slots.Acquire(context.Background(), share); err != nil {
		t.Fatal(err) // a background context is never done
	}
	t.Cleanup(func() { slots.Release(share) })
}
