package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
)

// idleBufferManifest is the full-path RunnerDeployment and HRA with an idle
// buffer of two runners.
var idleBufferManifest = world.WithIdleRunners(fullpath.RunnerDeployment, "app", 2)

// An HRA with an idle buffer keeps two registered runners at rest; a job starts
// on one of them without waiting for a pod, and the buffer is refilled.
func TestAnIdleBufferStartsTheNextJobOnARegisteredRunner(t *testing.T) {
	parallel(t)
	const ns = "idle-buffer"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	require.Contains(t, idleBufferManifest, v1alpha1.IdleRunnersAnnotation)
	require.NoError(t, w.Apply(ctx, idleBufferManifest))

	settled := func() bool { return w.IdleRunners() == 2 && w.Runners.LivePods() == 2 }
	require.Eventually(t, settled, 60*time.Second, 100*time.Millisecond, "two idle registered runners before any job")
	// The pool's own replicas (1, left out of the manifest) may have made a
	// runner before the autoscaler's 2 came; count pods from here.
	before := len(w.Runners.PodTimes())

	w.Queue("octo-org/app", "build", []string{"self-hosted", "linux", "build"})
	require.Eventually(t, func() bool {
		jobs := w.GitHub.Jobs()
		return len(jobs) == 1 && jobs[0].Status == "completed"
	}, 30*time.Second, 100*time.Millisecond, "the job ran")
	job := w.GitHub.Jobs()[0]
	waited := job.StartedAt.Sub(job.CreatedAt)
	// The runner that took it was registered before the job was queued: a new
	// pod takes at least the simulator's 200 ms to register after Running.
	require.Less(t, waited, 200*time.Millisecond, "the job started on an idle runner")

	require.Eventually(t, settled, 60*time.Second, 100*time.Millisecond, "the buffer is back to two idle runners")
	created := len(w.Runners.PodTimes()) - before
	// One pod for the job's refill while it ran; ephemeral, the runner that ran
	// it is replaced by at most one more once the job is done.
	require.LessOrEqual(t, created, 2, "the buffer is refilled, not rebuilt")
	require.GreaterOrEqual(t, created, 1, "the runner that took the job is replaced")
	require.Empty(t, w.Runners.Violations())
	t.Logf("job queued -> started %v on an idle runner; %d pods created to refill the buffer", waited.Round(time.Millisecond), created)
}
