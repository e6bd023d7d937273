package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// pollHolder is the worker identity running a listener's poll, and the
// poll's activity ID; empty while none runs.
func pollHolder(ctx context.Context, tc client.Client, listener string) (string, string) {
	desc, err := tc.DescribeWorkflowExecution(ctx, listener, "")
	if err != nil {
		return "", ""
	}
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() == calls.PollScaleSet && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return pa.GetLastWorkerIdentity(), pa.GetActivityId()
		}
	}
	return "", ""
}

// Three workers; the one running the scale set's poll is SIGKILLed, first
// mid-poll, then between recording a message and deleting it from the
// service's queue. Another takes the poll over when the dead worker's
// liveness Lease expires, long before the poll's 2-minute heartbeat timeout; every
// job runs, none twice, none is left waiting.
func TestAScaleSetsPollMovesToALiveWorkerWhenItsWorkerIsKilled(t *testing.T) {
	parallel(t)
	const ns = "scaleset-failover"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 2,
		NoWebhook: true, Workers: 3, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second},
	})
	tc := dialTemporal(t, ns)
	require.NoError(t, w.Apply(ctx, scaleSetManifest))
	listener := contract.ScaleSetWorkflowID(ns, "RunnerDeployment", "app")

	holder, pollID := waitPoll(t, ctx, tc, listener, "", "")
	// A job before the kill, which the dying worker's poll may have taken.
	w.Queue("octo-org/app", "before", []string{"arc-app"})
	killedAt := time.Now()
	workerOf(t, w, holder).Kill()
	holder, pollID = waitPoll(t, ctx, tc, listener, holder, pollID)
	t.Logf("killed mid-poll: the poll moved %.1f s after the SIGKILL", time.Since(killedAt).Seconds())

	// Caught between recording a message and deleting it: the poll that
	// deletes it first hangs on the service until its worker is dead. The
	// message is the last one recorded, the new job's or one before it; the
	// new job's comes after it either way.
	release := w.GitHub.HoldMessageDeletes()
	w.Queue("octo-org/app", "unacked", []string{"arc-app"})
	var recorded workflows.ScaleSetState
	require.Eventually(t, func() bool {
		sets := w.GitHub.ScaleSets()
		return query(ctx, tc, listener, &recorded) == nil && recorded.Unacked != 0 && len(sets) == 1 && sets[0].Undeleted > 0
	}, 30*time.Second, 100*time.Millisecond, "a message recorded, not yet deleted")
	holder, pollID = waitPoll(t, ctx, tc, listener, "", "") // the poll held deleting it
	killedAt = time.Now()
	workerOf(t, w, holder).Kill()
	release()
	waitPoll(t, ctx, tc, listener, holder, pollID)
	t.Logf("killed before the delete: the poll moved %.1f s after the SIGKILL", time.Since(killedAt).Seconds())

	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("after-%d", i), []string{"arc-app"})
	}
	allDone(t, w, 5, 120*time.Second, "every job ran, those queued before each kill too")
	seen := map[string]bool{}
	for _, j := range w.GitHub.Jobs() {
		require.False(t, seen[j.Name], "job %s ran once", j.Name)
		seen[j.Name] = true
	}
	require.Empty(t, w.Runners.Violations())
}

// waitPoll waits until a poll runs on a worker other than gone, as another
// activity than pollID, and returns its worker and activity ID.
func waitPoll(t *testing.T, ctx context.Context, tc client.Client, listener, gone, pollID string) (string, string) {
	t.Helper()
	var holder, id string
	require.Eventually(t, func() bool {
		holder, id = pollHolder(ctx, tc, listener)
		return holder != "" && holder != gone && id != pollID
	}, 50*time.Second, 100*time.Millisecond, "a poll runs on a live worker (sooner than the poll's heartbeat timeout)")
	return holder, id
}

// workerOf is the world's worker process of a Temporal identity (host-pid).
func workerOf(t *testing.T, w *world.World, identity string) *world.Process {
	t.Helper()
	for _, p := range w.Workers {
		if world.IsProcess(identity, p.Pid()) {
			return p
		}
	}
	t.Fatalf("no worker of this world is %s", identity)
	return nil
}

// query reads a listener's state.
func query(ctx context.Context, tc client.Client, id string, into *workflows.ScaleSetState) error {
	v, err := tc.QueryWorkflow(ctx, id, "", contract.QueryState)
	if err != nil {
		return err
	}
	return v.Get(into)
}
