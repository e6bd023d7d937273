package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// The reconcile asks about runs, and only about the jobs of queued runs no
// webhook announced: its cost does not grow with the runs it knows.
func TestReconcileByRunAsksOnlyAboutUnknownRuns(t *testing.T) {
	srv, client := fakeGitHubClient(t, fakegithub.Options{}, github.Options{})
	labels := []string{"self-hosted", "linux"}
	var known []int64
	for range 20 {
		known = append(known, srv.QueueJob("octo/app", "announced", labels).RunID)
	}
	missed := srv.QueueJob("octo/app", "missed", labels)
	srv.QueueJob("octo/app", "other-labels", []string{"self-hosted", "windows"})

	g := &GitHub{Jobs: client}
	out, err := g.ListQueuedJobs(context.Background(), QueuedJobsInput{
		Repositories: []string{"octo/app"}, Labels: []string{"linux"}, ByRun: true, KnownRuns: known,
	})
	require.NoError(t, err)
	require.Equal(t, []int64{missed.ID}, out.Queued, "the job no webhook announced, of labels the pool fits")
	require.Equal(t, []int64{missed.RunID}, out.QueuedRuns)
	require.Len(t, out.OpenRuns, 22)
	require.Equal(t, 4, out.Calls, "two run lists and the two unknown runs' jobs, not one call per known run")
	jobCalls := srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runs/{run}/jobs"]
	require.Equal(t, 2, jobCalls)
}

// A run queued less than the quiet time ago is not asked about: its delivery is on
// its way, or went to another autoscaler of the repository. Once older and
// still unknown, it is.
func TestReconcileByRunLeavesYoungRunsToTheirDeliveries(t *testing.T) {
	var now time.Time
	srv, client := fakeGitHubClient(t, fakegithub.Options{Now: func() time.Time { return now }}, github.Options{})
	labels := []string{"self-hosted", "linux"}
	now = time.Now().Add(-2 * RunQuiet)
	old := srv.QueueJob("octo/app", "missed", labels)
	now = time.Now()
	young := srv.QueueJob("octo/app", "just queued", labels)

	g := &GitHub{Jobs: client}
	out, err := g.ListQueuedJobs(context.Background(), QueuedJobsInput{Repositories: []string{"octo/app"}, Labels: labels, ByRun: true, Quiet: RunQuiet})
	require.NoError(t, err)
	require.Equal(t, []int64{old.ID}, out.Queued, "the run queued long ago")
	require.ElementsMatch(t, []int64{old.RunID, young.RunID}, out.OpenRuns, "the young run is open: its reservations stay")
	require.Equal(t, 3, out.Calls, "the two run lists and the old run's jobs")
}

// A run another autoscaler of the process knows (its reservation, told by the
// webhook) is not asked about: a run queued behind one pool's maxReplicas cost
// a call per reconcile of every other autoscaler of the repository.
func TestReconcileByRunLeavesRunsAnotherAutoscalerKnows(t *testing.T) {
	srv, client := fakeGitHubClient(t, fakegithub.Options{Now: func() time.Time { return time.Now().Add(-2 * RunQuiet) }}, github.Options{})
	busy := srv.QueueJob("octo/app", "behind the busy pool", []string{"self-hosted", "busy"})
	missed := srv.QueueJob("octo/app", "missed", []string{"self-hosted", "linux"})

	g := &GitHub{Jobs: client}
	ctx := context.Background()
	_, err := g.ListQueuedJobs(ctx, QueuedJobsInput{Repositories: []string{"octo/app"}, Labels: []string{"busy"}, ByRun: true,
		Quiet: RunQuiet, KnownRuns: []int64{busy.RunID}})
	require.NoError(t, err)
	out, err := g.ListQueuedJobs(ctx, QueuedJobsInput{Repositories: []string{"octo/app"}, Labels: []string{"linux"}, ByRun: true, Quiet: RunQuiet})
	require.NoError(t, err)
	require.Equal(t, []int64{missed.ID}, out.Queued)
	require.Equal(t, 1, srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runs/{run}/jobs"],
		"only the run no autoscaler knew, once (the second reconcile's answer comes from the HTTP cache); not the first autoscaler's run")
}

// An autoscaler with no history asks about every open run, however young,
// and learns the jobs in progress as well as the queued ones.
func TestReconcileByRunWithNoHistoryFindsRunningJobs(t *testing.T) {
	srv, client := fakeGitHubClient(t, fakegithub.Options{}, github.Options{})
	labels := []string{"self-hosted", "linux"}
	queued := srv.QueueJob("octo/app", "queued while no autoscaler ran", labels)
	running := srv.QueueJob("octo/app", "running on a runner taken over", labels)
	tok, err := client.RegistrationToken(context.Background(), github.Scope{Repository: "octo/app"})
	require.NoError(t, err)
	_, err = srv.Register(tok.Value(), "app-r1", labels, true)
	require.NoError(t, err)
	_, err = srv.StartJob(running.ID, "app-r1")
	require.NoError(t, err)

	g := &GitHub{Jobs: client}
	in := QueuedJobsInput{Repositories: []string{"octo/app"}, Labels: []string{"linux"}, ByRun: true, Quiet: RunQuiet}
	out, err := g.ListQueuedJobs(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, out.Queued, "young runs are left to their deliveries")
	require.Empty(t, out.InProgress)
	late := srv.QueueJob("octo/app", "queued after the cached list", labels)

	in.Running = true
	out, err = g.ListQueuedJobs(context.Background(), in)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{queued.ID, late.ID}, out.Queued, "the list is read afresh, not from the cache")
	require.Equal(t, []int64{running.ID}, out.InProgress)
	require.Equal(t, []int64{running.RunID}, out.InProgressRuns)
	require.ElementsMatch(t, []int64{queued.RunID, running.RunID, late.RunID}, out.OpenRuns)
}
