package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The slots go heaviest first once every registered test waits, and two
// tests that measure latency never hold slots at once.
func TestSlotsGoHeaviestFirstAndLatencyTestsApart(t *testing.T) {
	q := &slotQueue{free: 4, total: 4, goParallel: 10, weights: map[string]int{
		"light": 5, "heavy": 90, "middle": 40, "measuresA": 80, "measuresB": 70,
	}}
	tests := []struct {
		name  string
		share int64
	}{{"light", 1}, {"middle", 1}, {"measuresB", 2}, {"heavy", 1}, {"measuresA", 2}}
	for range tests {
		q.register()
	}
	granted := make(chan string, len(tests))
	for _, tc := range tests {
		go func() {
			q.acquire(tc.name, tc.share)
			granted <- tc.name
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
	// heavy (1) and measuresA (2) take 3 of 4; measuresB waits for
	// measuresA, so middle takes the last slot; light waits.
	first := []string{next(), next(), next()}
	require.ElementsMatch(t, []string{"heavy", "measuresA", "middle"}, first)
	require.Empty(t, granted, "nothing more fits")
	q.release(1) // heavy ends: measuresB still may not run beside measuresA
	require.Equal(t, "light", next())
	q.release(2) // measuresA ends
	q.release(1)
	require.Equal(t, "measuresB", next())
}
