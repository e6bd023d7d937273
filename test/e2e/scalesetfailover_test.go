package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// pollHolder is the worker identity running a listener's poll, and when its
// current attempt started; empty while none runs.
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

// Two workers; the one running the scale set's poll is SIGKILLed. The other
// takes the poll over when the dead worker's liveness Lease expires, long
// before the poll's 60 s heartbeat timeout; jobs queued after the kill run,
// none twice, none left waiting.
func TestAScaleSetsPollMovesToALiveWorkerWhenItsWorkerIsKilled(t *testing.T) {
	parallel(t)
	const ns = "scaleset-failover"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 2,
		NoWebhook: true, Workers: 2, Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second},
	})
	tc := dialTemporal(t, ns)
	require.NoError(t, w.Apply(ctx, scaleSetManifest))
	listener := contract.ScaleSetWorkflowID(ns, "RunnerDeployment", "app")

	var holder, pollID string
	require.Eventually(t, func() bool {
		holder, pollID = pollHolder(ctx, tc, listener)
		return holder != ""
	}, 60*time.Second, 100*time.Millisecond, "a worker polls the set")
	var victim *world.Process
	for _, p := range w.Workers {
		if strings.HasSuffix(holder, "-"+strconv.Itoa(p.Pid())) {
			victim = p
		}
	}
	require.NotNil(t, victim, "the poll's worker %s is one of the world's", holder)

	// A job before the kill, which the dying worker's poll may have taken.
	w.Queue("octo-org/app", "before", []string{"arc-app"})
	killedAt := time.Now()
	victim.Kill()
	var movedAfter time.Duration
	require.Eventually(t, func() bool {
		other, id := pollHolder(ctx, tc, listener)
		if other == "" || other == holder || id == pollID {
			return false
		}
		movedAfter = time.Since(killedAt)
		return true
	}, 50*time.Second, 100*time.Millisecond, "the poll moved to the live worker before its heartbeat timeout")
	t.Logf("the poll moved %.1f s after the SIGKILL", movedAfter.Seconds())

	for i := range 3 {
		w.Queue("octo-org/app", fmt.Sprintf("after-%d", i), []string{"arc-app"})
	}
	allDone(t, w, 4, 120*time.Second, "every job ran, the one queued before the kill too")
	seen := map[string]bool{}
	for _, j := range w.GitHub.Jobs() {
		require.False(t, seen[j.Name], "job %s ran once", j.Name)
		seen[j.Name] = true
	}
	require.Empty(t, w.Runners.Violations())
}
