package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// Counts go out at once after a quiet interval, then at most once per
// DefaultPoolStatusInterval; a failure goes out at once.
func TestAPoolWritesCountsOncePerInterval(t *testing.T) {
	pt := newPoolTest(t)
	s := spec(0, "h1", true)
	s.StatusInterval = 0 // the default
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3}) })
	pt.at(2*time.Second, func() {
		require.Equal(t, 1, pt.statusWrites, "the first change is written at once")
		require.Equal(t, 3, pt.status.Replicas)
		pt.registerAll()
	})
	pt.at(3*time.Second, func() { pt.done(pt.created[0].name, EndCompleted) })
	pt.at(30*time.Second, func() {
		require.Equal(t, 1, pt.statusWrites, "registrations and an end wait for the interval")
		require.Zero(t, pt.status.Ready)
	})
	pt.at(32*time.Second, func() {
		require.Equal(t, 2, pt.statusWrites, "written once when the interval passed")
		require.Equal(t, 2, pt.status.Ready, "the two registered runners that did not end")
		require.Equal(t, 3, pt.status.Replicas, "and the ended one's replacement")
		pt.done(pt.created[1].name, EndPodFailed)
	})
	pt.at(33*time.Second, func() {
		require.Equal(t, 3, pt.statusWrites, "a failure is written at once")
		require.Equal(t, EndPodFailed, pt.status.LastRunnerFailure)
	})
	pt.deleteAndDrain(40 * time.Second)
	pt.run(s)
}
