package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// When the service deletes a pool's scale set and the listener makes it
// again, the runners made from the old set's JIT configurations get no more
// jobs: the pool replaces them as in a rollout, new ones first, and leaves a
// busy one to finish.
func TestAPoolReplacesTheRunnersOfADeletedScaleSet(t *testing.T) {
	pt := newPoolTest(t)
	s := spec(3, "h1", true)
	s.ScaleSet = &v1alpha1.ScaleSetRef{Name: "linux-set"}
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScaleSetID, contract.ScaleSetID{ID: 7, Name: "linux-set"})
	})
	pt.at(2*time.Second, func() { pt.registerAll() })
	var old []string
	pt.at(time.Minute, func() {
		require.Len(t, pt.created, 3)
		for _, c := range pt.created {
			old = append(old, c.name)
		}
		pt.busy[old[0]] = true
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3, Running: []string{old[0]}})
	})
	pt.at(time.Minute+time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScaleSetID, contract.ScaleSetID{ID: 8, Name: "linux-set"})
	})
	pt.at(time.Minute+2*time.Second, func() { pt.registerAll() })
	pt.at(2*time.Minute, func() { pt.finishStopped() })
	pt.at(3*time.Minute, func() {
		pt.registerAll()
		st := pt.state()
		require.Equal(t, int64(8), st.ScaleSetID)
		require.ElementsMatch(t, old[1:], pt.stopped, "the idle runners of the deleted set are stopped, the busy one is not")
		require.Contains(t, pt.names(""), old[0], "the busy runner finishes its job")
		require.NotContains(t, pt.names("h1"), old[0], "and counts as of the old set")
		require.Len(t, pt.names("h1"), 3, "three runners of the new set, as for a new template")
		require.Contains(t, pt.events, "ScaleSetReplaced: runner scale set 7 is gone; its 3 runner(s) are replaced by runners of the new one")
	})
	pt.deleteAndDrain(4 * time.Minute)
	pt.run(s)
}
