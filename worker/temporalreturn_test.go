package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A change that waited out a long outage is sent as soon as Temporal answers
// its health again, not at the end of its backoff: after five failures its
// next try would come 8 s later.
func TestAChangeThatWaitedForTemporalGoesOnceItIsBack(t *testing.T) {
	rd := object(v1alpha1.KindRunnerDeployment, "app", map[string]any{
		"template": map[string]any{"spec": map[string]any{"repository": "octo-org/app"}},
	})
	dyn := fakeResources(rd)
	pool := contract.PoolWorkflowID("ci", v1alpha1.KindRunnerDeployment, "app")
	down := serviceerror.NewUnavailable("connection refused")
	temporal := &flakyTemporal{unhealthy: true, fails: map[string][]error{pool: {down, down, down, down, down}}}
	stop := runWatcher(t, dyn, temporal)

	// Five tries fail over 7.5 s (0.5, 1, 2 and 4 s apart); the next would
	// be 8 s after the fifth.
	require.Eventually(t, func() bool { return temporal.pending(pool) == 0 }, 20*time.Second, 10*time.Millisecond, "five tries while Temporal is down")
	temporal.mu.Lock()
	temporal.unhealthy = false
	temporal.mu.Unlock()
	back := time.Now()
	require.Eventually(t, func() bool { return temporal.signalled(pool + " spec") }, 5*time.Second, 10*time.Millisecond,
		"the change goes once Temporal answers, within a probe or two, not after the 8 s backoff")
	t.Logf("sent %v after Temporal answered", time.Since(back).Round(time.Millisecond))
	require.NoError(t, stop())
}
