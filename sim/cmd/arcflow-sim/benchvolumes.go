package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/world"
)

// volumeMaxRunners is the RunnerSet's maxReplicas in the volume phase.
const volumeMaxRunners = 5

// benchVolumes runs jobs on a RunnerSet with a cache volume at maxReplicas 5:
// first one after another, then in bursts of 10. It reports the most claims
// that existed at once, the share of runners that started on a volume an
// earlier runner wrote to, and the claims left once the RunnerSet is deleted.
func benchVolumes(ctx context.Context, s *session, jobs int) (string, error) {
	const ns, pool = "bench-volumes", "cached"
	w, err := s.world(ctx, world.Config{Namespace: ns, Orgs: []string{"volumes-org"}, RegisterDelay: time.Second, JobDuration: time.Second, Seed: 11})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	removeVolumes, err := world.OfferVolumes(ctx, w.Kube, "bench-cache", volumeMaxRunners+1)
	defer func() { _ = removeVolumes() }()
	if err != nil {
		return "", err
	}
	claims := func() int {
		list, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=" + pool})
		if err != nil {
			return -1
		}
		return len(list.Items)
	}
	stopSampling := world.TrackPeak(ctx, 100*time.Millisecond, claims)
	defer stopSampling()
	if err := w.Apply(ctx, world.CachedRunnerSet(pool, "volumes-org", "bench-cache", volumeMaxRunners)); err != nil {
		return "", err
	}
	if err := s.waitAccepted(ctx, ns, pool); err != nil {
		return "", err
	}
	queued := 0
	queue := func(n int) error {
		for range n {
			w.Queue("volumes-org/app", fmt.Sprintf("build-%d", queued), []string{"self-hosted", "linux", pool})
			queued++
		}
		return waitFor(ctx, 2*time.Minute, fmt.Sprintf("%d jobs done", queued), func() bool {
			done := 0
			for _, j := range w.GitHub.Jobs() {
				if j.Status == "completed" {
					done++
				}
			}
			return done == queued
		})
	}
	for range jobs {
		if err := queue(1); err != nil {
			return "", err
		}
	}
	sequential, sequentialUsed := w.Runners.VolumeReuse()
	for range jobs / 10 {
		if err := queue(10); err != nil {
			return "", err
		}
	}
	started, onUsed := w.Runners.VolumeReuse()
	table, _ := s.stack.Kubectl(ctx, "get", "runnerset", "-n", ns)
	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "hra,runnerset", "--all"); err != nil {
		return "", fmt.Errorf("delete the RunnerSet: %w: %s", err, out)
	}
	if err := waitFor(ctx, 2*time.Minute, "the claims to go with the RunnerSet", func() bool { return claims() == 0 }); err != nil {
		return "", err
	}
	peak := stopSampling()
	share := func(used, all int) string {
		beyond := max(all-volumeMaxRunners, 0)
		if beyond == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%d of %d (%.0f%%)", min(used, beyond), beyond, 100*float64(min(used, beyond))/float64(beyond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### RunnerSet volumes at maxReplicas %d on the %s: %d jobs one after another, then %d in bursts of 10\n\n",
		volumeMaxRunners, s.serverName(), jobs, jobs/10*10)
	b.WriteString("| figure | arcflow | ARC legacy |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| most claims at once | %d (max %d) | grows as PVs are released and not reused (ARC #2282, #3221) |\n", peak, volumeMaxRunners)
	fmt.Fprintf(&b, "| runners after the first %d that started on a used volume, one after another | %s |  |\n", volumeMaxRunners, share(sequentialUsed, sequential))
	fmt.Fprintf(&b, "| the same, all %d runners | %s (%d runners, %d on a used volume) |  |\n", started, share(onUsed, started), started, onUsed)
	b.WriteString("| claims left after the RunnerSet is deleted | 0 |  |\n")
	fmt.Fprintf(&b, "\n```\n$ kubectl get runnerset -n %s\n%s```\n", ns, table)
	return b.String(), nil
}
