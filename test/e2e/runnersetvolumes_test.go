package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/world"
)

// A RunnerSet's volumes outlive their runner: six jobs one after another at
// maxReplicas 2 never have more than two claims, every runner after the first
// two starts on a volume an earlier runner wrote to, and deleting the RunnerSet
// leaves no claim.
func TestRunnerSetVolumesAreReusedByTheNextRunner(t *testing.T) {
	parallel(t)
	const ns = "runnerset-volumes"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	removeVolumes, err := world.OfferVolumes(ctx, w.Kube, "e2e-cache", 4)
	t.Cleanup(func() { _ = removeVolumes() })
	require.NoError(t, err)
	claims := func(ctx context.Context) int {
		list, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=cached"})
		if err != nil {
			return -1 // counted as unknown: the sampler runs outside the test's goroutine
		}
		return len(list.Items)
	}
	stopSampling := world.TrackPeak(ctx, 50*time.Millisecond, func() int { return claims(ctx) })
	defer stopSampling()
	require.NoError(t, w.Apply(ctx, world.CachedRunnerSet("cached", "octo-org", "e2e-cache", 2)))

	const jobs = 6
	for i := range jobs {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "cached"})
		require.Eventually(t, func() bool {
			done := 0
			for _, j := range w.GitHub.Jobs() {
				if j.Status == "completed" {
					done++
				}
			}
			return done == i+1
		}, 60*time.Second, 100*time.Millisecond, "job %d ran", i)
	}
	started, onUsed := w.Runners.VolumeReuse()
	require.GreaterOrEqual(t, started, jobs, "every runner mounted its slot's claim")
	require.GreaterOrEqual(t, onUsed, started-2, "every runner after the first two started on a used volume")
	out, err := stack.Kubectl(ctx, "get", "runnerset", "-n", ns)
	require.NoError(t, err)
	t.Logf("kubectl get runnerset:\n%s", out)
	require.Contains(t, out, "VOLUMES-IN-USE")

	out, err = stack.Kubectl(ctx, "delete", "-n", ns, "hra,runnerset", "--all")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool { return claims(ctx) == 0 }, 60*time.Second, 200*time.Millisecond, "no claim left after the RunnerSet is deleted")
	peak := stopSampling()
	require.LessOrEqual(t, peak, 2, "never more claims than maxReplicas")
	t.Logf("%d runners with volumes, %d of them on a used volume; at most %d claims at once", started, onUsed, peak)
}
