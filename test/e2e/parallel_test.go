package e2e

import (
	"flag"
	"slices"
	"sync"
	"testing"
)

// The tests that run side by side share the machine's CPU. Most of them
// check what arcflow does, whatever the pace; a few check how fast it does it
// (a warm runner takes a job at once), and with five neighbours on two
// saturated cores that speed is the neighbours', not arcflow's. Each test
// therefore takes a share of the -parallel slots for its whole length: one
// for most, more for a test that measures latency, so that fewer tests run
// beside it.

// parallel runs the test side by side with the others (t.Parallel) and holds
// one slot while it runs.
func parallel(t *testing.T) { parallelWithRoom(t, 1) }

// parallelWithRoom is parallel for a test that measures latency: it holds
// share slots (at most all of them), so that fewer others run beside it, and
// never runs beside another such test: the warm runners' test once failed,
// its jobs starting late, while the scale set's buffer test ran beside it.
func parallelWithRoom(t *testing.T, share int64) {
	t.Helper()
	t.Parallel()
	q := theSlots()
	share = q.acquire(share)
	t.Cleanup(func() { q.release(share) })
}

// slotQueue hands out slots in the order the tests ask. Heaviest first was
// tried: it put the longest tests, which load the machine most, side by
// side at the start, and two tests that measure pace failed beside them.
type slotQueue struct {
	mu          sync.Mutex
	free, total int64
	waiting     []*slotWaiter
	// measuring is true while a test holding more than one slot runs.
	measuring bool
}

type slotWaiter struct {
	share int64
	ready chan struct{}
}

// measures says whether a test holding share slots measures latency
// (parallelWithRoom).
func measures(share int64) bool { return share > 1 }

// theSlots are -parallel slots.
var theSlots = sync.OnceValue(func() *slotQueue {
	slots := int64(1)
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, ok := f.Value.(flag.Getter).Get().(int); ok && n > 0 {
			slots = int64(n)
		}
	}
	return &slotQueue{free: slots, total: slots}
})

// acquire waits for share slots (at most all of them) and returns how many
// it holds.
func (q *slotQueue) acquire(share int64) int64 {
	w := &slotWaiter{share: min(share, q.total), ready: make(chan struct{})}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	q.grant()
	q.mu.Unlock()
	<-w.ready
	return w.share
}

func (q *slotQueue) release(share int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free += share
	if measures(share) {
		q.measuring = false
	}
	q.grant()
}

// grant gives slots to the waiting tests in order, stopping at the first
// that does not fit, so a test that needs several slots is not passed over
// for good. A test that measures latency while another does waits without
// holding up the rest.
func (q *slotQueue) grant() {
	for i := 0; i < len(q.waiting); {
		w := q.waiting[i]
		if measures(w.share) && q.measuring {
			i++
			continue
		}
		if w.share > q.free {
			return
		}
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.free -= w.share
		q.measuring = q.measuring || measures(w.share)
		close(w.ready)
	}
}
