package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/sim/fullpath"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/worker"
	"github.com/arcflow/arcflow/workflows"
)

// A pool's start creates a runner's pod before its workflow (runner revision
// 10) only while no replica of an older release lives: such a replica could
// run the runner, create its pod again in a local activity, and leave a
// history the newer replicas cannot replay. An older release's replica is a
// live liveness Lease that names no runner revision; once it is gone, the
// starts create the pods, and every job runs either way.
func TestStartsCreateRunnersOnlyOnceNoOlderReplicaLives(t *testing.T) {
	parallel(t)
	const ns = "created-at-start"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	kube, err := stack.Kube()
	require.NoError(t, err)
	leases := kube.CoordinationV1().Leases(ns)
	older := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "arcflow-worker-older", Labels: map[string]string{worker.LabelWorkerLiveness: "true"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("older-replica-1"), LeaseDurationSeconds: ptr.To(int32(3600)),
			RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))},
	}
	_, err = leases.Create(ctx, older, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Apply(ctx, fullpath.RunnerDeployment))

	tc := dialTemporal(t, ns)
	runJob := func(n int) {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", n), []string{"self-hosted", "linux", "build"})
		require.Eventually(t, func() bool {
			jobs := w.GitHub.Jobs()
			return len(jobs) == n && jobs[n-1].Status == "completed"
		}, 60*time.Second, 100*time.Millisecond, "job %d ran", n)
	}
	runJob(1)
	runJob(2)
	before := createdAtStart(t, ctx, tc)
	require.NotEmpty(t, before)
	for name, created := range before {
		require.False(t, created, "runner %s started while an older replica lived", name)
	}

	require.NoError(t, leases.Delete(ctx, older.Name, metav1.DeleteOptions{}))
	// The replicas read the Leases at most every 5 s: jobs go on meanwhile,
	// each runner's workflow creating its pod, until a start creates one.
	n := 2
	require.Eventually(t, func() bool {
		n++
		runJob(n)
		for name, created := range createdAtStart(t, ctx, tc) {
			if _, seen := before[name]; !seen && created {
				return true
			}
		}
		return false
	}, 90*time.Second, 10*time.Millisecond, "a start created its runner once the older replica was gone")
	require.Empty(t, w.Runners.Violations())
	t.Logf("%d jobs, each run once; the runners of the first %d created their own pods", n, len(before))
}

// createdAtStart reads every runner workflow of the namespace: whether its
// start created its pod (RunnerInput.Created), by runner name.
func createdAtStart(t *testing.T, ctx context.Context, tc client.Client) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	var token []byte
	for {
		page, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = 'RunnerWorkflow'", NextPageToken: token})
		require.NoError(t, err)
		for _, e := range page.Executions {
			events, err := world.History(ctx, tc, e.Execution.WorkflowId, e.Execution.RunId)
			require.NoError(t, err)
			started := events[0].GetWorkflowExecutionStartedEventAttributes()
			if started.GetContinuedExecutionRunId() != "" {
				continue
			}
			var in workflows.RunnerInput
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(started.GetInput(), &in))
			out[in.Pod.Name] = in.Created != nil
		}
		if token = page.NextPageToken; len(token) == 0 {
			return out
		}
	}
}
