package e2e

import (
	"bufio"
	"cmp"
	"flag"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests that run side by side share the machine's CPU. Most of them
// check what arcflow does, whatever the pace; a few check how fast it does it
// (a warm runner takes a job at once), and with five neighbours on two
// saturated cores that speed is the neighbours', not arcflow's. Each test
// therefore takes a share of the slots (E2E_PARALLEL, else -parallel) for its
// whole length: one for most, more for a test that measures latency, so that
// fewer tests run beside it.
//
// Slots go to the heaviest waiting test first (e2e-weights.txt), once every
// test that asked for one is waiting: in the order Go resumes them, the
// longest tests began last and ran on alone at the end (75 s of a 450 s run).

// parallel runs the test side by side with the others (t.Parallel) and holds
// one slot while it runs.
func parallel(t *testing.T) { parallelWithRoom(t, 1) }

// parallelWithRoom is parallel for a test that measures latency: it holds
// share slots (at most all of them), so that fewer others run beside it, and
// never runs beside another such test: the warm runners' test once failed,
// its jobs starting late, while the scale set's buffer test ran beside it.
func parallelWithRoom(t *testing.T, share int64) {
	t.Helper()
	q := theSlots()
	q.register()
	t.Parallel()
	share = q.acquire(t.Name(), share)
	t.Cleanup(func() { q.release(share) })
}

// slotQueue hands out slots, heaviest test first.
type slotQueue struct {
	mu      sync.Mutex
	free    int64
	total   int64
	weights map[string]int
	// gated holds every grant until all registered tests wait, which is only
	// possible when Go lets them all past t.Parallel at once.
	gated               bool
	goParallel          int
	registered, arrived int
	waiting             []*slotWaiter
	// measuring is true while a test holding more than one slot runs.
	measuring bool
}

type slotWaiter struct {
	weight int
	share  int64
	ready  chan struct{}
}

// measures says whether the test measures latency (parallelWithRoom).
func (w *slotWaiter) measures() bool { return w.share > 1 }

var theSlots = sync.OnceValue(func() *slotQueue {
	goParallel := 1
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, ok := f.Value.(flag.Getter).Get().(int); ok && n > 0 {
			goParallel = n
		}
	}
	total := int64(goParallel)
	if n, err := strconv.Atoi(os.Getenv("E2E_PARALLEL")); err == nil && n > 0 {
		total = min(int64(n), total)
	}
	return &slotQueue{free: total, total: total, weights: readWeights("e2e-weights.txt"), goParallel: goParallel}
})

// register counts a test that will wait for a slot; it runs before
// t.Parallel, while the tests' sequential parts still run one by one.
func (q *slotQueue) register() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.registered++
	q.gated = q.registered <= q.goParallel
}

func (q *slotQueue) acquire(name string, share int64) int64 {
	share = min(share, q.total)
	weight, ok := q.weights[name]
	if !ok {
		weight = 60 // as scripts/test.sh counts a test it has no weight for
	}
	w := &slotWaiter{weight: weight, share: share, ready: make(chan struct{})}
	q.mu.Lock()
	q.arrived++
	q.waiting = append(q.waiting, w)
	// Stable: equal weights keep the order they came in.
	slices.SortStableFunc(q.waiting, func(a, b *slotWaiter) int { return cmp.Compare(b.weight, a.weight) })
	q.grant()
	q.mu.Unlock()
	<-w.ready
	return share
}

func (q *slotQueue) release(share int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.free += share
	if share > 1 {
		q.measuring = false
	}
	q.grant()
}

// grant gives slots to the waiting tests in order, stopping at the first
// that does not fit, so a test that needs several slots is not passed over
// for good. A test that measures latency while another does waits without
// holding up the rest.
func (q *slotQueue) grant() {
	if q.gated && q.arrived < q.registered {
		return
	}
	for i := 0; i < len(q.waiting); {
		w := q.waiting[i]
		if w.measures() && q.measuring {
			i++
			continue
		}
		if w.share > q.free {
			return
		}
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.free -= w.share
		q.measuring = q.measuring || w.measures()
		close(w.ready)
	}
}

// readWeights reads "TestName seconds" lines; a missing file gives none.
func readWeights(path string) map[string]int {
	weights := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return weights
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		name, seconds, ok := strings.Cut(strings.TrimSpace(lines.Text()), " ")
		if n, err := strconv.Atoi(strings.TrimSpace(seconds)); ok && err == nil && !strings.HasPrefix(name, "#") {
			weights[name] = n
		}
	}
	return weights
}
