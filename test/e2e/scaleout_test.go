package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/worker"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Two `arcflow worker` and two `arcflow webhook` processes, as the chart and the
// kustomize base deploy them, against one Temporal and one Kubernetes: the work
// spreads over both workers and both webhooks, one worker leads the Kubernetes
// watchers, a worker SIGKILLed mid-activity has its activity retried on the other
// within 15 s (a runner's task timeout and the pick-up), and the leader SIGKILLed hands the watchers over within the lease
// time while every job still completes and no busy runner's pod is deleted.
func TestTwoWorkersAndTwoWebhooks(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("needs the local stack")
	}
	const ns, hra = "scaleout", "app"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	useTemporalNamespace(t, ctx, ns)
	w, err := world.Start(ctx, world.Config{
		Stack: stack, RepoRoot: repoRoot(t), Namespace: ns, TemporalNamespace: ns, Dir: t.TempDir(), Binary: arcflowBinary(t),
		Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 13,
		Workers: 2, Webhooks: 2,
		// The production lease, not the world's short test one: the handover measured
		// here is the one a user gets.
		// Every registration check reads GitHub (no shared list between two), so
		// part 2 finds a runner waiting on GitHub's slow answer to kill under it.
		Env: []string{"ARCFLOW_LEASE_DURATION=" + worker.DefaultLeaseDuration.String(), "ARCFLOW_GITHUB_RUNNER_LIST_INTERVAL=1ms"},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		w.GitHub.SetLatency(0)
		for _, p := range w.Workers {
			if !p.Running() {
				assert.NoError(t, p.Start())
			}
		}
		_, _ = stack.Kubectl(context.Background(), "delete", "-n", ns, "hra,rdeploy", "--all", "--wait=false")
		if !assert.Eventually(t, func() bool { return len(runnerPods(t, w)) == 0 && len(w.GitHub.Runners()) == 0 },
			90*time.Second, 200*time.Millisecond, "pools drained after delete") {
			t.Logf("left: runner pods %v, GitHub runners %+v", runnerPods(t, w), w.GitHub.Runners())
			for _, j := range w.GitHub.Jobs() {
				t.Logf("job %d %s by %s at %s-%s", j.ID, j.Conclusion, j.RunnerName, j.StartedAt.Format("15:04:05.000"), j.CompletedAt.Format("15:04:05.000"))
			}
			for _, c := range w.GitHub.Calls() {
				t.Logf("GitHub call %s %s %s %d", c.At.Format("15:04:05.000"), c.Method, c.Path, c.Status)
			}
		}
		if t.Failed() {
			for _, p := range append(append([]*world.Process{}, w.Workers...), w.Webhooks...) {
				data, _ := os.ReadFile(p.LogPath())
				t.Logf("%s log:\n%s", p.Name, data)
			}
			logWorkflowsOnFailure(t, ns, hra)
		}
		require.NoError(t, w.Stop())
	})
	tc := dialTemporal(t, ns)

	require.NoError(t, w.Apply(ctx, fullpath.RunnerDeployment))
	require.Eventually(t, func() bool {
		out, err := stack.JSONPath(ctx, ns, "hra", hra, "{.status.desiredReplicas}")
		return err == nil && out == "0" && len(runnerPods(t, w)) == 0 &&
			world.PoolAtZero(ctx, tc, contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, hra))
	}, 60*time.Second, 200*time.Millisecond, "the pool settles at minReplicas 0")
	leader := requireOneLeader(t, ctx, w)

	// 1. Work spreads over both workers and both webhooks.
	const spreadJobs = 12
	queueJobs(t, ctx, w, spreadJobs)
	waitJobsDone(t, w, spreadJobs, 90*time.Second)
	var total uint64
	ran := make([]uint64, len(w.Workers))
	for i, url := range w.WorkerMetricsURLs {
		byType, err := world.ActivityExecutions(ctx, url)
		require.NoError(t, err)
		for _, n := range byType {
			ran[i] += n
		}
		total += ran[i]
		t.Logf("%s ran %d activities %v", w.Workers[i].Name, ran[i], byType)
	}
	for i := range ran {
		require.NotZero(t, ran[i], "%s ran none of the activities", w.Workers[i].Name)
	}
	t.Logf("activity share: %s %.0f %%, %s %.0f %% of %d", w.Workers[0].Name, 100*float64(ran[0])/float64(total),
		w.Workers[1].Name, 100*float64(ran[1])/float64(total), total)
	for i, url := range w.WebhookMetricsURLs {
		signals, err := world.WebhookSignalCounts(ctx, url)
		require.NoError(t, err)
		require.NotZero(t, signals.Deliveries, "%s answered no delivery", w.Webhooks[i].Name)
		t.Logf("%s answered %.0f deliveries with %.0f signals", w.Webhooks[i].Name, signals.Deliveries, signals.Signals)
	}
	require.Equal(t, leader, requireOneLeader(t, ctx, w), "the lease stayed where it was")

	// 2. A worker SIGKILLed mid-call: GitHub answers slowly (longer than the
	// heartbeat and workflow task timeouts, so heartbeats are what keep the call
	// alive), and the worker running a runner's GitHub or Kubernetes call is
	// killed. A runner makes its calls as local activities inside a workflow task,
	// which the survivor runs again once the task times out. A job's start
	// tells a runner it registered, so runners that run jobs ask GitHub
	// nothing: two runners forced up for 10 s take no job, and ask whether
	// they registered as they are stopped.
	// A task seen running may still end before the kill lands (a runner's last
	// calls are quick Kubernetes ones, slow only on a loaded machine): then
	// nothing was retried, and the test forces two more runners and kills again.
	// Each try, and part 3, starts with the forced runners of the try before
	// ended: a runner still registered would take part 3's jobs (no new pod
	// to watch) or make a second try's kill find a stop in progress.
	forcedRunnersEnded := func(what string) {
		require.Eventually(t, func() bool {
			return len(runnerPods(t, w)) == 0 &&
				world.PoolAtZero(ctx, tc, contract.PoolWorkflowID(ns, v1alpha1.KindRunnerDeployment, hra))
		}, 90*time.Second, 200*time.Millisecond, "the runners forced up end once stopped (%s)", what)
	}
	w.GitHub.SetLatency(7 * time.Second)
	for try := 1; ; try++ {
		require.NoError(t, tc.SignalWorkflow(ctx, contract.AutoscalerWorkflowID(ns, hra), "", contract.SignalForceScale,
			workflows.ForceScale{Replicas: 2, Duration: "10s"}))
		victim, pending := startedRunnerActivity(t, ctx, tc, w)
		survivor := w.Workers[1-victim]
		killAt := time.Now()
		w.Workers[victim].Kill()
		t.Logf("killed %s while runner %s ran %s (attempt %d)", w.Workers[victim].Name, pending.WorkflowID, pending.ActivityType, pending.Attempt)
		pickedUp, how, err := retriedOn(t, ctx, tc, pending, survivor, killAt)
		require.NoError(t, w.Workers[victim].Start())
		if errors.Is(err, world.ErrNotRetried) && try < 3 {
			t.Logf("%s of %s ended before the kill; again", pending.ActivityType, pending.WorkflowID)
			forcedRunnersEnded(fmt.Sprintf("try %d", try))
			continue
		}
		require.NoError(t, err)
		t.Logf("RECOVERY kill -> %s %s on %s: %v", pending.ActivityType, how, survivor.Name, pickedUp.Round(10*time.Millisecond))
		require.LessOrEqual(t, pickedUp, 15*time.Second, "a surviving replica picks up a killed worker's activity within 15 s")
		break
	}
	w.GitHub.SetLatency(0)
	forcedRunnersEnded("the killed worker's too")

	// 3. The leader SIGKILLed: the Lease moves to the other worker once it expires,
	// and that worker's watchers handle the pods of jobs queued after the kill.
	leader = requireOneLeader(t, ctx, w)
	follower := w.Workers[1-leader]
	killAt := time.Now()
	w.Workers[leader].Kill()
	queueJobs(t, ctx, w, 4)
	var handover time.Duration
	require.Eventually(t, func() bool {
		holder, err := leaseHolder(ctx, w)
		if err == nil && strings.HasSuffix(holder, fmt.Sprintf("-%d", follower.Pid())) {
			handover = time.Since(killAt)
			return true
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the follower takes the Lease")
	t.Logf("HANDOVER kill -> %s holds the Lease: %v (lease %v)", follower.Name, handover.Round(10*time.Millisecond), worker.DefaultLeaseDuration)
	// client-go's rules bound the handover (worker.HandoverWithin); the grace is
	// for Lease reads and writes on an API server sharing 2 busy cores.
	require.LessOrEqual(t, handover, worker.HandoverWithin(worker.DefaultLeaseDuration)+1500*time.Millisecond,
		"the handover takes the lease time and client-go's checks")

	// The first runner pod created after the kill ends with its job: the pod's
	// exit reached the new leader's watcher, and the runner workflow deleted it.
	var firstGone time.Duration
	require.Eventually(t, func() bool {
		var first string
		for _, p := range w.Runners.PodTimes() {
			if p.Created.After(killAt) {
				first = p.Name
				break
			}
		}
		if first == "" {
			return false
		}
		_, err := w.Kube.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
		if err != nil {
			firstGone = time.Since(killAt)
			return true
		}
		return false
	}, 90*time.Second, 100*time.Millisecond, "a runner pod created after the kill is deleted when its job is done")
	t.Logf("HANDOVER kill -> first new runner pod's exit handled and the pod deleted: %v", firstGone.Round(10*time.Millisecond))
	waitJobsDone(t, w, spreadJobs+4, 90*time.Second)
	require.Equal(t, 1-leader, requireOneLeader(t, ctx, w))
	require.NoError(t, w.Workers[leader].Start())

	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "success", j.Conclusion, "job %d", j.ID)
	}
	require.Empty(t, w.Runners.Violations(), "no pod deleted while its runner was busy")
	require.Zero(t, w.Runners.Interrupted())
	stats := w.Sender.Stats()
	require.Zero(t, stats.Rejected+stats.Failed, "every delivery accepted")
}

func queueJobs(t *testing.T, ctx context.Context, w *world.World, n int) {
	require.NoError(t, sim.Workload{Jobs: n, Repositories: []string{"octo-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "build"}}}.
		Run(ctx, w.Queue))
}

func waitJobsDone(t *testing.T, w *world.World, n int, within time.Duration) {
	require.Eventually(t, func() bool {
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" {
				done++
			}
		}
		return done == n
	}, within, 100*time.Millisecond, "%d jobs completed", n)
}

func leaseHolder(ctx context.Context, w *world.World) (string, error) {
	lease, err := w.Kube.CoordinationV1().Leases(w.Namespace()).Get(ctx, "arcflow", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// requireOneLeader finds the worker that holds the Lease and checks it is the
// only one running the watchers: only the watchers set the autoscaler's gauges.
func requireOneLeader(t *testing.T, ctx context.Context, w *world.World) int {
	leader := -1
	require.Eventually(t, func() bool {
		holder, err := leaseHolder(ctx, w)
		if err != nil {
			return false
		}
		leader = -1
		for i, p := range w.Workers {
			if p.Running() && strings.HasSuffix(holder, fmt.Sprintf("-%d", p.Pid())) {
				leader = i
			}
		}
		if leader < 0 {
			return false
		}
		for i, url := range w.WorkerMetricsURLs {
			if !w.Workers[i].Running() {
				continue
			}
			metrics, err := metricsText(ctx, url)
			if err != nil || strings.Contains(metrics, "horizontalrunnerautoscaler_spec_max_replicas{") != (i == leader) {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "exactly one worker, the Lease holder, runs the watchers")
	return leader
}

// startedRunnerActivity waits until a runner workflow has an activity running on
// one of the workers and says which worker and which activity.
func startedRunnerActivity(t *testing.T, ctx context.Context, tc client.Client, w *world.World) (int, world.StartedActivity) {
	var found world.StartedActivity
	victim := -1
	require.Eventually(t, func() bool {
		started, err := world.StartedRunnerActivities(ctx, tc, w.Namespace())
		if err != nil {
			return false
		}
		for _, a := range started {
			// Running for a second already, it waits on GitHub's 7 s answer and
			// still will at the kill; a short Kubernetes call seen running could
			// end before the kill and leave nothing to retry. A workflow task
			// whose calls wait on that answer ends with it, 7 s in (before its
			// heartbeat, 8 s into its 10 s timeout), so one seen later could
			// be over before the kill.
			running := time.Since(a.StartedAt)
			if running < time.Second || (a.InWorkflowTask && running > 3*time.Second) {
				continue
			}
			for i, p := range w.Workers {
				if a.RanBy(p.Pid()) {
					victim, found = i, a
					return true
				}
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "a runner workflow runs a slow activity on a worker")
	return victim, found
}

func metricsText(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// retriedOn waits until the surviving worker has run a killed worker's activity
// again and says how long after the kill (world.Rerun says how it is seen), or
// returns world.ErrNotRetried when the attempt seen running ended before the
// kill.
func retriedOn(t *testing.T, ctx context.Context, tc client.Client, pending world.StartedActivity, survivor *world.Process, killAt time.Time) (time.Duration, string, error) {
	bySurvivor := func(id string) bool { return world.IsProcess(id, survivor.Pid()) }
	var took time.Duration
	var how string
	var ended error
	defer func() {
		if t.Failed() {
			events, err := world.TaskHistory(context.Background(), tc, pending.WorkflowID, pending.RunID)
			desc, _ := tc.DescribeWorkflowExecution(context.Background(), pending.WorkflowID, pending.RunID)
			t.Logf("%s seen started at %s by %s; pending task now %v; its history (%v):\n%s", pending.WorkflowID,
				pending.StartedAt.Format("15:04:05.000"), pending.WorkerIdentity, desc.GetPendingWorkflowTask(), err, events)
		}
	}()
	require.Eventually(t, func() bool {
		at, seen, err := world.Rerun(ctx, tc, pending, bySurvivor)
		if errors.Is(err, world.ErrNotRetried) {
			ended = err
			return true
		}
		if err != nil || at.IsZero() {
			return false
		}
		took, how = at.Sub(killAt), seen
		return true
	}, 45*time.Second, 50*time.Millisecond, "the surviving worker runs %s of %s again", pending.ActivityType, pending.WorkflowID)
	return took, how, ended
}
