package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// lostJobsPool re-runs lost jobs once, on three nodes of the test's own that
// no other test's pod tolerates.
const lostJobsPool = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
  annotations:
    arcflow.dev/rerun-lost-jobs: "true"
spec:
  template:
    spec:
      repository: octo-org/app
      labels: [linux, build]
      tolerations:
      - {key: arcflow.dev/test, operator: Equal, value: lost-jobs, effect: NoSchedule}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: sim.arcflow.dev/node, operator: In, values: [lost-a, lost-b, lost-c]}
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: app
spec:
  scaleTargetRef:
    name: app
  minReplicas: 0
  maxReplicas: 10
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

// Six 60 s jobs run, three on node lost-a and three on lost-b; one of
// lost-a's jobs shares its workflow run with one of lost-b's. A seventh job
// fails by itself (its step exits 1). Node lost-a goes: its three jobs are
// lost. Two runs have completed, so those jobs are re-run at once; the third
// waits for its run's other job, and the worker is killed and started again
// while it waits: it is re-run once, when that job is done. The other three
// finish undisturbed, the failing job is not re-run, and a re-run job
// OOM-killed (lost twice, with a limit of 1) is not re-run again.
func TestJobsLostToInfrastructureAreRerunOnce(t *testing.T) {
	parallel(t) // its nodes are its own: tainted, so that no other test's pods land there
	const ns = "lost-jobs"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	kube, err := stack.Kube()
	require.NoError(t, err)
	taint := corev1.Taint{Key: "arcflow.dev/test", Value: "lost-jobs", Effect: corev1.TaintEffectNoSchedule}
	for _, node := range []string{"lost-a", "lost-b", "lost-c"} {
		require.NoError(t, sim.AddNode(ctx, kube, node, taint))
		t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	}
	cordon(t, ctx, kube, "lost-b", true)
	cordon(t, ctx, kube, "lost-c", true)
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 36,
		JobDurations: func(j fakegithub.JobInfo) time.Duration {
			switch {
			case j.Name == "fails":
				return 2 * time.Second
			case j.RunAttempt > 1:
				return 10 * time.Second // a re-run: long enough to lose it again
			}
			return 60 * time.Second
		},
		JobConclusion: failsWhenNamedFails,
	})
	logLostJobsOnFailure(t, w, ns)
	require.NoError(t, w.Apply(ctx, lostJobsPool))

	// Three jobs on lost-a, each its own run.
	var onA []fakegithub.JobInfo
	for i := range 3 {
		onA = append(onA, w.GitHub.QueueJob("octo-org/app", fmt.Sprintf("a-%d", i), buildLabels))
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress") == 3 }, 60*time.Second, 100*time.Millisecond, "lost-a's jobs run")
	// Three on lost-b; b-0 shares a-0's run. Then the job that fails by itself.
	cordon(t, ctx, kube, "lost-a", true)
	cordon(t, ctx, kube, "lost-b", false)
	sibling, err := w.GitHub.QueueJobInRun(onA[0].RunID, "b-0", buildLabels)
	require.NoError(t, err)
	onB := []fakegithub.JobInfo{sibling}
	for i := 1; i < 3; i++ {
		onB = append(onB, w.GitHub.QueueJob("octo-org/app", fmt.Sprintf("b-%d", i), buildLabels))
	}
	require.Eventually(t, func() bool { return w.GitHub.JobsIn("in_progress") == 6 }, 60*time.Second, 100*time.Millisecond, "lost-b's jobs run")
	fails := w.GitHub.QueueJob("octo-org/app", "fails", buildLabels)
	require.Eventually(t, func() bool { j, _ := w.GitHub.Job(fails.ID); return j.Status == "completed" }, 60*time.Second, 100*time.Millisecond)
	for _, j := range onA {
		got, _ := w.GitHub.Job(j.ID)
		require.Equal(t, "lost-a", w.Runners.NodeOf(got.RunnerName), "job %s runs on lost-a", j.Name)
	}

	// lost-a goes; re-runs land on lost-c.
	cordon(t, ctx, kube, "lost-b", true)
	cordon(t, ctx, kube, "lost-c", false)
	lostAt := time.Now()
	require.NoError(t, w.Runners.LoseNode(ctx, "lost-a"))
	require.Len(t, w.Runners.Lost(), 3)

	// a-0's re-run waits for b-0; the worker dies and comes back meanwhile.
	tc := dialTemporal(t, ns)
	waiting := contract.RerunWorkflowID("octo-org/app", onA[0].RunID, "a-0")
	require.Eventually(t, func() bool {
		st, err := rerunState(ctx, tc, waiting)
		return err == nil && st.Phase == workflows.RerunPhaseWaiting
	}, 90*time.Second, 200*time.Millisecond, "a-0's re-run waits for its run")
	require.NoError(t, w.Worker.Restart())

	rerunOf := func(job fakegithub.JobInfo) (fakegithub.JobInfo, bool) {
		for _, j := range w.GitHub.Jobs() {
			if j.RunID == job.RunID && j.Name == job.Name && j.RunAttempt > job.RunAttempt {
				return j, true
			}
		}
		return fakegithub.JobInfo{}, false
	}
	// a-1's re-run is lost as well: its runner OOM-killed once it runs.
	var a1 fakegithub.JobInfo
	require.Eventually(t, func() bool {
		j, ok := rerunOf(onA[1])
		a1 = j
		return ok && j.Status == "in_progress"
	}, 90*time.Second, 100*time.Millisecond, "a-1 re-run and running")
	secondStart := a1.StartedAt
	pod := podOf(t, ctx, kube, ns, a1.RunnerName)
	require.NoError(t, w.Runners.OOMKill(ctx, ns, pod))

	require.Eventually(t, func() bool {
		for _, j := range onA {
			if r, ok := rerunOf(j); !ok || r.Status != "completed" {
				return false
			}
		}
		return true
	}, 4*time.Minute, 200*time.Millisecond, "every lost job re-run to its end")

	// Exactly one re-run per lost job, none for the rest.
	reruns := map[int64]int{}
	for _, r := range w.GitHub.Reruns() {
		reruns[r.JobID]++
	}
	require.Len(t, w.GitHub.Reruns(), 3, "one re-run per lost job: %+v", w.GitHub.Reruns())
	for _, j := range onA {
		require.Equal(t, 1, reruns[j.ID], "%s re-run once", j.Name)
	}
	for _, j := range append(onB, fails) {
		got, _ := w.GitHub.Job(j.ID)
		require.Zero(t, reruns[j.ID], "%s not re-run", j.Name)
		want := "success"
		if j.Name == "fails" {
			want = "failure"
		}
		require.Equal(t, want, got.Conclusion, "%s ended as it would have", j.Name)
	}
	for i, j := range onA {
		r, _ := rerunOf(j)
		want := "success"
		if i == 1 {
			want = "failure" // lost again; the limit is 1
		}
		require.Equal(t, want, r.Conclusion, "%s's re-run", j.Name)
	}
	require.Empty(t, w.Runners.Violations(), "arcflow deleted no busy runner's pod")
	require.Len(t, w.Runners.Lost(), 4, "three on lost-a, one OOM-killed")

	// The second loss reaches a-1's re-run workflow through the completed
	// delivery, the autoscaler and the pool: a moment after GitHub shows the
	// job completed, which is all the wait above knows (a loaded CI run read
	// the state before it arrived).
	var outcomes []string
	require.Eventually(t, func() bool {
		twice, err := rerunState(ctx, tc, contract.RerunWorkflowID("octo-org/app", onA[1].RunID, "a-1"))
		outcomes = twice.Outcomes
		return err == nil && len(outcomes) >= 2
	}, 30*time.Second, 100*time.Millisecond, "a-1's second loss reaches its re-run workflow")
	require.Equal(t, []string{activities.RerunDone, activities.RerunLimitReached}, outcomes, "a-1: re-run, then past its limit")
	calls := w.GitHub.CallCounts() // before the permission phase, whose calls re-run nothing

	// Credentials without actions: write: a lost job is not re-run, and the
	// RunnerDeployment's condition says why.
	w.GitHub.SetActionsWrite(false)
	late := w.GitHub.QueueJob("octo-org/app", "late", buildLabels)
	require.Eventually(t, func() bool { j, _ := w.GitHub.Job(late.ID); return j.Status == "in_progress" }, 60*time.Second, 100*time.Millisecond)
	lateJob, _ := w.GitHub.Job(late.ID)
	require.NoError(t, w.Runners.OOMKill(ctx, ns, podOf(t, ctx, kube, ns, lateJob.RunnerName)))
	require.Eventually(t, func() bool {
		return conditionField(ctx, ns, "rdeploy", "app", "RerunLostJobs", "reason") == "NoActionsWrite"
	}, 60*time.Second, 200*time.Millisecond, "the condition says the credentials lack actions: write")
	require.Len(t, w.GitHub.Reruns(), 3, "the late job is not re-run")

	// What the operator sees: events on the RunnerDeployment.
	events, err := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=app"})
	require.NoError(t, err)
	reasons := map[string]int{}
	for _, e := range events.Items {
		reasons[e.Type+"/"+e.Reason]++
		if e.Reason != "ScalingUp" && e.Reason != "ScalingDown" {
			t.Logf("event %s %s: %s", e.Type, e.Reason, e.Message)
		}
	}
	// Events are written at least once: an activity that wrote one is run
	// again when the worker dies before its completion is recorded (this
	// test kills it). The re-runs themselves were counted exactly above.
	require.GreaterOrEqual(t, reasons["Normal/JobRerun"], 3, "events: %v", reasons)
	require.GreaterOrEqual(t, reasons["Normal/JobLost"], 5, "the pool noticed 5 losses: %v", reasons)
	require.GreaterOrEqual(t, reasons["Warning/JobLost"], 2, "one past its limit, one without permission: %v", reasons)

	// Figures for the closing note.
	perRerun := float64(calls["GET /repos/{owner}/{repo}/actions/runs/{run}"]+calls["POST /repos/{owner}/{repo}/actions/jobs/{job}/rerun"]) / 3
	r2, _ := rerunOf(onA[2])
	t.Logf("loss -> a-2's re-run started on a new runner: %v; a-1's: %v; a-0 (waited for its run): %v; GitHub calls per re-run: %.1f (%v)",
		r2.StartedAt.Sub(lostAt).Round(10*time.Millisecond), secondStart.Sub(lostAt).Round(10*time.Millisecond),
		mustRerun(rerunOf(onA[0])).StartedAt.Sub(lostAt).Round(10*time.Millisecond), perRerun, calls)
}

func mustRerun(j fakegithub.JobInfo, _ bool) fakegithub.JobInfo { return j }

func cordon(t *testing.T, ctx context.Context, kube kubernetes.Interface, node string, on bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%v}}`, on)
	_, err := kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

// logLostJobsOnFailure logs, when the test fails, the worker's log, what pool
// app kept of lost runners and failed jobs, the re-run workflows it started,
// and the jobs and losses of the world.
func logLostJobsOnFailure(t *testing.T, w *world.World, ns string) {
	logWorldOnFailure(t, w, ns, "app")
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		reruns, _ := temporalCLI(context.Background(), ns, "workflow", "list", "--query", "WorkflowType='RerunWorkflow'")
		t.Logf("re-run workflows:\n%s", reruns)
		t.Logf("lost: %+v", w.Runners.Lost())
	})
}

// logWorldOnFailure logs, if the test fails, the worker's log, the state of
// the RunnerDeployment pool's and its HRA's workflows, and GitHub's jobs.
func logWorldOnFailure(t *testing.T, w *world.World, ns, pool string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		out, _ := os.ReadFile(w.Worker.LogPath())
		t.Logf("worker log:\n%s", out)
		logWorkflowsOnFailure(t, ns, pool)
		t.Logf("jobs: %+v", w.GitHub.Jobs())
		t.Logf("GitHub's runners: %+v", w.GitHub.Runners())
		if pods, err := w.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{}); err == nil {
			for _, p := range pods.Items {
				t.Logf("pod %s: %s, node %q, deletion %v, finalizers %v", p.Name, p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp, p.Finalizers)
			}
		}
	})
}

// logWorkflowsOnFailure logs a RunnerDeployment pool's and its HRA's states
// and every runner workflow of the namespace, open or closed, with its times:
// what a failed test's reader needs to tell what the pool did when.
func logWorkflowsOnFailure(t *testing.T, ns, pool string) {
	ctx := context.Background()
	for _, id := range []string{contract.PoolWorkflowID(ns, "RunnerDeployment", pool), contract.AutoscalerWorkflowID(ns, pool)} {
		state, _ := temporalCLI(ctx, ns, "workflow", "query", "--workflow-id", id, "--type", "state")
		t.Logf("%s state:\n%s", id, state)
	}
	runners, err := temporalCLI(ctx, ns, "workflow", "list", "--query", "WorkflowType = 'RunnerWorkflow'", "--limit", "200")
	t.Logf("runner workflows (%v):\n%s", err, runners)
	for _, line := range strings.Split(runners, "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "Running" {
			state, _ := temporalCLI(ctx, ns, "workflow", "query", "--workflow-id", fields[1], "--type", "state")
			history, _ := temporalCLI(ctx, ns, "workflow", "show", "--detailed", "--workflow-id", fields[1])
			t.Logf("%s state:\n%s\nhistory:\n%s", fields[1], state, history)
		}
	}
}

// failsWhenNamedFails: the job named "fails" fails by itself (its step
// exits 1); every other job succeeds.
func failsWhenNamedFails(j fakegithub.JobInfo) string {
	if j.Name == "fails" {
		return "failure"
	}
	return "success"
}

func podOf(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, runner string) string {
	t.Helper()
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "RUNNER_NAME" && e.Value == runner {
					return p.Name
				}
			}
		}
	}
	t.Fatalf("no pod runs runner %s", runner)
	return ""
}

func rerunState(ctx context.Context, tc client.Client, id string) (workflows.RerunState, error) {
	var st workflows.RerunState
	v, err := tc.QueryWorkflow(ctx, id, "", contract.QueryState)
	if err != nil {
		return st, err
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return st, err
	}
	return st, json.Unmarshal(raw, &st)
}
