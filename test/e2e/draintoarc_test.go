package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// drainToARCRunners is RunnerDeployment app of octo-org/app whose runner
// pods go to the node named node, which the cluster has not added yet.
func drainToARCRunners(node string) string {
	return strings.Replace(world.RepoRunnerDeployment("app", "octo-org/app", "build"), "      labels: [linux, build]\n",
		fmt.Sprintf("      labels: [linux, build]\n      nodeSelector: {%q: %q}\n", sim.NodeLabel, node), 1)
}

// handedBackEntries reads HRA app's capacityReservations that arcflow wrote.
func handedBackEntries(t *testing.T, ctx context.Context, ns string) []v1alpha1.CapacityReservation {
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	u, err := dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(ns).Get(ctx, "app", metav1.GetOptions{})
	require.NoError(t, err)
	var hra v1alpha1.HorizontalRunnerAutoscaler
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &hra))
	var ours []v1alpha1.CapacityReservation
	for _, r := range hra.Spec.CapacityReservations {
		if calls.HandedBack(r.Name) {
			ours = append(ours, r)
		}
	}
	return ours
}

// The way back to ARC keeps every job. Five jobs are queued while arcflow's
// runner pods wait for a node the cluster has not added yet; `arcflow drain`
// deletes the Pending pods and hands the five jobs back in ARC's form: five
// capacityReservations named after the jobs, one replica each, expiring with
// arcflow's reservations. A second drain doubles nothing. GitHub's webhook is
// not repointed here (the test has no ARC webhook server), which is the case
// the held autoscaler covers: two jobs queued after the drain reach arcflow's
// webhook and are handed back by it. Then the node comes up, ARC's controller
// (a Lease holder, and a stand-in applying ARC's reservation rule) starts and
// runs all seven; their completions, still reaching arcflow, take their
// entries out again.
func TestDrainHandsQueuedJobsBackToARC(t *testing.T) {
	parallel(t)
	const ns, arcNS, leaseName, node = "drain-arc", "drain-arc-system", "actions-runner-controller", "drain-arc-node"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 3 * time.Second, Seed: 1,
		Env: []string{"ARCFLOW_ARC_CONTROLLER_LEASE=" + arcNS + "/" + leaseName},
	})
	require.NoError(t, w.Apply(ctx, drainToARCRunners(node)+"---\n"+world.WebhookHRA("app", v1alpha1.KindRunnerDeployment, 10, 30)))
	tc := dialTemporal(t, ns)
	autoscaler := func() *workflows.AutoscalerState {
		v, err := tc.QueryWorkflow(ctx, contract.AutoscalerWorkflowID(ns, "app"), "", contract.QueryState)
		if err != nil {
			return nil
		}
		var s workflows.AutoscalerState
		require.NoError(t, v.Get(&s))
		return &s
	}
	labels := []string{"self-hosted", "linux", "build"}
	var jobs []fakegithub.JobInfo
	for i := range 5 {
		jobs = append(jobs, w.GitHub.QueueJob("octo-org/app", fmt.Sprintf("before-%d", i), labels))
	}
	require.Eventually(t, func() bool {
		s := autoscaler()
		return s != nil && len(s.Reservations.Active) == 5 && w.Runners.LivePods() == 5
	}, 60*time.Second, 100*time.Millisecond, "five jobs reserved, their runner pods Pending")
	reserved := autoscaler()

	drainStart := time.Now()
	lines, err := startCLI(t, ns, "drain", "--namespace", ns, "--timeout", "2m")()
	text := joined(lines)
	t.Logf("arcflow drain:\n%s", text)
	require.NoError(t, err)
	require.Contains(t, text, "drain: hra/drain-arc/app: handed 5 queued jobs back to ARC as capacityReservations of HRA drain-arc/app")
	require.Contains(t, lines[len(lines)-1].text, "drain: done after")
	drained := time.Now()
	require.Zero(t, w.Runners.LivePods(), "the Pending pods are gone")
	for _, j := range w.GitHub.Jobs() {
		require.Equal(t, "queued", j.Status, j.Name)
	}

	entries := handedBackEntries(t, ctx, ns)
	require.Len(t, entries, 5, "%+v", entries)
	for _, r := range reserved.Reservations.Active {
		i := slices.IndexFunc(entries, func(e v1alpha1.CapacityReservation) bool { return e.Name == "arcflow-job-"+fmt.Sprint(r.JobID) })
		require.GreaterOrEqual(t, i, 0, "job %d handed back: %+v", r.JobID, entries)
		e := entries[i]
		require.Equal(t, 1, e.Replicas)
		require.True(t, r.ExpirationTime.Truncate(time.Second).Equal(e.ExpirationTime.Time), "job %d expires with its reservation: %v, not %v", r.JobID, r.ExpirationTime, e.ExpirationTime)
		require.False(t, e.EffectiveTime.Time.Before(drainStart.Truncate(time.Second)) || e.EffectiveTime.Time.After(drained), "effective when handed back: %v", e.EffectiveTime)
	}
	lines, err = startCLI(t, ns, "drain", "--namespace", ns, "--timeout", "0")()
	require.NoError(t, err, joined(lines))
	require.Len(t, handedBackEntries(t, ctx, ns), 5, "a second drain doubles nothing")

	// Two jobs reach arcflow's webhook after the drain; the held autoscaler
	// hands them back.
	lateQueued := time.Now()
	for i := range 2 {
		jobs = append(jobs, w.GitHub.QueueJob("octo-org/app", fmt.Sprintf("after-%d", i), labels))
	}
	require.Eventually(t, func() bool { return len(handedBackEntries(t, ctx, ns)) == 7 }, 30*time.Second, 100*time.Millisecond,
		"the jobs queued after the drain are handed back")
	lateHandedBack := time.Since(lateQueued)
	for _, j := range jobs {
		require.True(t, slices.ContainsFunc(handedBackEntries(t, ctx, ns), func(e v1alpha1.CapacityReservation) bool {
			return e.Name == calls.HandBackName(j.ID)
		}), "%s (%d) handed back", j.Name, j.ID)
	}
	require.Zero(t, w.Runners.LivePods(), "arcflow created no runner while held")

	// The node comes up, and ARC's controller starts: its Lease, then the
	// stand-in that turns the reservations into runner pods.
	kube, err := stack.Kube()
	require.NoError(t, err)
	require.NoError(t, sim.AddNode(ctx, kube, node))
	t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	stopLease := heldARCLease(t, ctx, arcNS, leaseName)
	t.Cleanup(func() { stopLease() })
	require.Eventually(t, func() bool {
		return acceptedField(ctx, ns, "hra", "app", "reason") == "ARCControllerActive"
	}, 30*time.Second, 200*time.Millisecond, "arcflow sees ARC's controller")
	arc := startARCStandIn(t, ctx, w, ns, "app", "octo-org/app")
	require.Eventually(t, func() bool {
		for _, j := range jobs {
			if got, _ := w.GitHub.Job(j.ID); got.Status != "completed" {
				return false
			}
		}
		return true
	}, 90*time.Second, 200*time.Millisecond, "ARC's stand-in runs every job handed back; errors: %v", arc.errors())
	var lastStart time.Duration
	for _, j := range jobs {
		got, _ := w.GitHub.Job(j.ID)
		require.Equal(t, "success", got.Conclusion, got.Name)
		require.True(t, strings.HasPrefix(got.RunnerName, "app-arc-"), "%s ran on ARC's runner, not %q", got.Name, got.RunnerName)
		lastStart = max(lastStart, got.StartedAt.Sub(arc.started))
	}
	pods, lastPod := arc.pods()
	require.Equal(t, 7, pods, "one runner pod per job handed back")
	require.Less(t, lastStart, 30*time.Second, "no job waits beyond ARC's start")
	own, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool})
	require.NoError(t, err)
	require.Empty(t, own.Items, "arcflow made no runner after the drain")
	require.Eventually(t, func() bool { return len(handedBackEntries(t, ctx, ns)) == 0 }, 30*time.Second, 200*time.Millisecond,
		"the completions take the entries out again")
	require.Empty(t, w.Runners.Violations())
	t.Logf("drain took %v; 5 jobs handed back by drain, 2 queued after it handed back by the held autoscaler %v after their queueing; "+
		"ARC's stand-in made %d pods, the last %v after its start; the last of the 7 jobs started %v after it",
		drained.Sub(drainStart).Round(10*time.Millisecond), lateHandedBack.Round(10*time.Millisecond), pods,
		lastPod.Sub(arc.started).Round(10*time.Millisecond), lastStart.Round(10*time.Millisecond))
}
