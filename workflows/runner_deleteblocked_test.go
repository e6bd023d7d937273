package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/activities"
)

// A deletion Kubernetes refuses (ARC's admission webhooks left registered with
// nothing serving them) is neither given up nor retried in a tight loop: the
// runner shows DeleteBlocked, tries again after 1, 2, 4, 8 minutes, and ends
// normally once the write is accepted, however long that takes.
func TestARefusedDeletionIsRetriedUntilAccepted(t *testing.T) {
	forEachRevision(t, func(t *testing.T, revision int) {
		rt := newRunnerTest(t, revision)
		rt.env.OnActivity(kube.EnsureRunnerPod, mock.Anything, mock.Anything).Return(
			activities.RunnerPodOutput{UID: "uid-1", Created: true, PoolToken: true}, nil)
		const accepted = 4 // the fifth attempt is accepted
		rt.env.OnActivity(kube.DeleteRunnerPod, mock.Anything, mock.Anything).Return(
			func(_ context.Context, ref activities.PodRef) error {
				rt.record("DeleteRunnerPod")
				require.Equal(t, "app", ref.Pool, "names the pool, for the event")
				if rt.count("DeleteRunnerPod") <= accepted {
					return temporal.NewNonRetryableApplicationError(`Internal error occurred: failed calling webhook "mutate.runner.actions.summerwind.dev"`,
						activities.ErrTypeAdmissionRefused, nil)
				}
				return nil
			})
		rt.mockFind(0)
		published := rt.recordPublished()
		rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
		rt.after(time.Minute, func() { rt.signalPod("Succeeded", false, "2") })
		var blocked RunnerState
		rt.after(time.Minute+30*time.Second, func() {
			blocked = rt.state()
		})

		done := rt.run(true, RunnerTimings{})
		require.Equal(t, EndCompleted, done.Reason)
		require.Equal(t, accepted+1, rt.count("DeleteRunnerPod"), "tried until accepted, never given up")
		var gaps []time.Duration
		for i := 1; i < len(rt.calls); i++ {
			if rt.calls[i].name == "DeleteRunnerPod" && rt.calls[i-1].name == "DeleteRunnerPod" {
				gaps = append(gaps, (rt.calls[i].at - rt.calls[i-1].at).Round(time.Minute))
			}
		}
		require.Equal(t, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}, gaps, "backs off, not a tight loop")
		require.Contains(t, blocked.DeleteBlocked, "mutate.runner.actions.summerwind.dev", "the state query says why")
		require.Contains(t, *published, string(RunnerStateDeleteBlocked), "arcflow status and the Web UI show it")
		require.Equal(t, string(PhaseDone), (*published)[len(*published)-1])
	})
}
