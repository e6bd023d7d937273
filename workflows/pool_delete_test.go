package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A deleted pool keeps its resource (arcflow's finalizer) until its last
// runner is gone: the busy one finishes its job, and only then is the
// finalizer removed. No pod is deleted by the pool itself within the grace.
func TestADeletedPoolReleasesItsResourceOnlyOnceDrained(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.busy[pt.created[0].name] = true
		pt.env.SignalWorkflow(contract.SignalDelete, nil)
	})
	pt.at(3*time.Second, func() {
		require.Len(t, pt.stopped, 2)
		pt.done(pt.created[1].name, EndStopped) // the idle one: removed from GitHub, then its pod
	})
	pt.at(20*time.Minute, func() {
		require.Zero(t, pt.released, "a busy runner is still there")
		pt.done(pt.created[0].name, EndCompleted) // its job done
	})
	pt.run(spec(2, "h1", true))
	require.Equal(t, 20*time.Minute, pt.released.Round(time.Second), "released once the busy runner finished")
	require.Equal(t, activities.PoolResourceRef{Namespace: "ci", Kind: "RunnerDeployment", Name: "app"}, pt.releasedRef)
	require.Empty(t, pt.forced, "within the grace period the pool deletes no pod")
	require.True(t, hasEvent(pt.events, "Deleting: removing 2 runners"), "%v", pt.events)
}

// A busy runner still there at the end of the grace period has its pod
// deleted by the pool (the operator's bound), and the event says so; the
// resource is released once that runner's workflow ends.
func TestADeletedPoolDeletesWhatIsLeftAfterTheGracePeriod(t *testing.T) {
	pt := newPoolTest(t)
	s := spec(1, "h1", true)
	s.DeletionGracePeriod = 30 * time.Minute
	pt.at(time.Second, pt.registerAll)
	pt.at(2*time.Second, func() {
		pt.busy[pt.created[0].name] = true
		pt.env.SignalWorkflow(contract.SignalDelete, nil)
	})
	pt.at(31*time.Minute, func() {
		require.Len(t, pt.forced, 1, "the pod of the runner left is deleted at the deadline")
		pt.done(pt.created[0].name, EndPodDeleted)
	})
	pt.run(s)
	require.Equal(t, pt.created[0].name, pt.forced[0].name)
	require.Equal(t, 30*time.Minute+2*time.Second, pt.forced[0].at.Round(time.Second))
	require.Equal(t, 31*time.Minute, pt.released.Round(time.Second))
	require.True(t, hasEvent(pt.events, "DeletionGraceExpired: 1 runners still ran after 30m0s"), "%v", pt.events)
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
