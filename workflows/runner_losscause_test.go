package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A runner OOM-killed while it runs a job was lost, whenever the pool's stop
// reaches it: the job's failed completion lowers the pool's count and makes
// the dead runner its first one to stop, and under load that stop arrives
// before the pod's news (an e2e test's re-run workflow never heard of a second
// loss). Only what arcflow's own stop brings about (a pod it deletes, a
// container that exits as it goes) is no loss: TestRunnerEndsWithTheCauseOfItsPodsLoss.
func TestAStopDoesNotHideAnOOMKill(t *testing.T) {
	oomKilled := func(rt *runnerTest) func() {
		return func() {
			rt.env.SignalWorkflow(contract.SignalPod, activities.PodState{UID: "uid-1", ResourceVersion: "2", Exists: true,
				Phase: corePhase("Failed"), Cause: activities.CauseOOMKilled})
		}
	}
	stop := func(rt *runnerTest) func() {
		return func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{Reason: "scale-down"}) }
	}
	for name, order := range map[string]func(rt *runnerTest){
		"together": func(rt *runnerTest) {
			rt.mockRemove()
			rt.after(time.Minute, oomKilled(rt))
			rt.after(time.Minute, stop(rt))
		},
		"while it unregisters": func(rt *runnerTest) {
			rt.mockRemove(temporal.NewApplicationError("GitHub is slow", "Timeout"), errors.New("again"))
			rt.after(time.Minute, oomKilled(rt))
			rt.after(time.Minute+500*time.Millisecond, stop(rt))
		},
		"after the stop, while it unregisters": func(rt *runnerTest) {
			rt.mockRemove(temporal.NewApplicationError("GitHub is slow", "Timeout"), errors.New("again"))
			rt.after(time.Minute, stop(rt))
			rt.after(time.Minute+500*time.Millisecond, oomKilled(rt))
		},
	} {
		t.Run(name, func(t *testing.T) {
			forEachRevision(t, func(t *testing.T, revision int) {
				rt := newRunnerTest(t, revision)
				rt.mockPod()
				rt.mockFind(0)
				order(rt)
				rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
				done := rt.run(true, RunnerTimings{})
				require.Equal(t, activities.CauseOOMKilled, done.Cause, "ended %s", done.Reason)
			})
		})
	}
}
