package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Slots go in the order asked, a test that needs more waits without being
// passed over, and two tests that measure latency never hold slots at once.
func TestSlotsKeepLatencyTestsApart(t *testing.T) {
	q := &slotQueue{free: 4, total: 4}
	granted := make(chan string, 8)
	ask := func(name string, share int64) {
		go func() {
			q.acquire(share)
			granted <- name
		}()
	}
	next := func() string {
		select {
		case name := <-granted:
			return name
		case <-time.After(10 * time.Second):
			t.Fatal("no slot granted")
			return ""
		}
	}
	ask("measuresA", 2)
	require.Equal(t, "measuresA", next())
	ask("measuresB", 2) // fits, but measuresA measures
	ask("plain1", 1)
	require.Equal(t, "plain1", next(), "the test behind it is not held up")
	ask("plain2", 1)
	require.Equal(t, "plain2", next())
	ask("plain3", 1) // no slot left
	q.release(1)     // plain1 ends
	require.Equal(t, "plain3", next(), "measuresB still waits for measuresA")
	q.release(2) // measuresA ends: 2 free
	require.Equal(t, "measuresB", next())
	require.Empty(t, granted)
}
