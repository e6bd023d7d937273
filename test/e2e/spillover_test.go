package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// twoPoolsForOneLabel is two RunnerDeployments with the same labels, each scaled
// from webhooks between 0 and 3 runners; ARC's manifests, no annotation.
func twoPoolsForOneLabel() string {
	var docs []string
	for _, name := range []string{"pool-a", "pool-b"} {
		docs = append(docs, world.RepoRunnerDeployment(name, "octo-org/app", "shared")+"---\n"+world.WebhookHRA(name, v1alpha1.KindRunnerDeployment, 3, 5))
	}
	return strings.Join(docs, "---\n")
}

// Six jobs for two pools of at most three runners that match them both: the
// first pool (by name) takes three, the other three spill over to the second
// instead of queueing behind the first, so all six start before any ends; each
// completion releases its reservation where it was made, and both pools go back
// to zero.
func TestJobsBeyondAFullPoolSpillOverToTheNextPool(t *testing.T) {
	parallel(t)
	const ns = "spill-over"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		// Jobs of 20 s: with 10 s, a loaded CI run started the sixth job
		// after the first ended, its pool's runner still coming up.
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 20 * time.Second, Seed: 1,
	})
	require.NoError(t, w.Apply(ctx, twoPoolsForOneLabel()))
	replicas := func(rd string) string {
		out, _ := stack.JSONPath(ctx, ns, "rdeploy", rd, "{.status.desiredReplicas}/{.status.replicas}")
		return out
	}
	desired := func(hra string) string {
		out, _ := stack.JSONPath(ctx, ns, "hra", hra, "{.status.desiredReplicas}")
		return out
	}
	// Both autoscalers run before the jobs come, as they do once the watcher saw the HRAs.
	require.Eventually(t, func() bool { return desired("pool-a") == "0" && desired("pool-b") == "0" },
		60*time.Second, 100*time.Millisecond, "both autoscalers at zero")

	for i := range 6 {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "shared"})
	}
	require.Eventually(t, func() bool {
		jobs := w.GitHub.Jobs()
		if len(jobs) != 6 {
			return false
		}
		for _, j := range jobs {
			if j.StartedAt.IsZero() {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "all six jobs started")
	// Where each job was reserved: the second pool's autoscaler holds the
	// three that spilled over.
	tc := dialTemporal(t, ns)
	value, err := tc.QueryWorkflow(ctx, contract.AutoscalerWorkflowID(ns, "pool-b"), "", contract.QueryState)
	require.NoError(t, err)
	var spilled workflows.AutoscalerState
	require.NoError(t, value.Get(&spilled))
	reservedInB := map[int64]bool{}
	for _, r := range spilled.Reservations.Active {
		reservedInB[r.JobID] = true
	}
	require.Len(t, reservedInB, 3, "three jobs spilled over to the second pool")
	// Both pools' runners take any of the six jobs, so a job reserved in one
	// pool may run on the other's runner. The pool whose reservation still
	// stands then replaces its runner that ran the other pool's job, until its
	// own job completes elsewhere: one pod more per such crossing, as on ARC.
	crossed := 0
	for _, j := range w.GitHub.Jobs() {
		if reservedInB[j.ID] != strings.HasPrefix(j.RunnerName, "pool-b") {
			crossed++
		}
	}
	firstEnd := time.Time{}
	var firstStart, lastStart time.Time
	for _, j := range w.GitHub.Jobs() {
		if j.StartedAt.After(lastStart) {
			lastStart = j.StartedAt
		}
		if firstStart.IsZero() || j.StartedAt.Before(firstStart) {
			firstStart = j.StartedAt
		}
		if !j.CompletedAt.IsZero() && (firstEnd.IsZero() || j.CompletedAt.Before(firstEnd)) {
			firstEnd = j.CompletedAt
		}
	}
	require.True(t, firstEnd.IsZero() || lastStart.Before(firstEnd),
		"no job waited for another to finish: the last started %v after the first, which ended %v after it started",
		lastStart.Sub(firstStart), firstEnd.Sub(firstStart))

	pods := map[string]int{}
	for _, p := range w.Runners.PodTimes() {
		pods[p.Name[:len("pool-a")]]++
	}
	require.Equal(t, map[string]int{"pool-a": 3, "pool-b": 3}, pods, "three runners in each pool, none beyond max")

	require.Eventually(t, func() bool {
		for _, j := range w.GitHub.Jobs() {
			if j.Status != "completed" {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "all six jobs done")
	require.Eventually(t, func() bool {
		return replicas("pool-a") == "0/0" && replicas("pool-b") == "0/0" && w.Runners.LivePods() == 0
	}, 60*time.Second, 200*time.Millisecond, "both pools back to zero after the scale-down delay")
	require.Empty(t, w.Runners.Violations())
	created := len(w.Runners.PodTimes())
	if crossed == 0 {
		require.Equal(t, 6, created, "one pod per job")
	} else {
		require.LessOrEqual(t, created, 6+crossed/2, "one pod per job, and one per pair of jobs that ran on each other's pools (%d jobs crossed)", crossed)
	}
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt).Round(10*time.Millisecond))
	}
	t.Logf("queued -> started per job: %v; pods per pool %v; %d pods for 6 jobs, %d of which ran on the other pool's runner", waits, pods, created, crossed)
}
