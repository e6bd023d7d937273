package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// A runner whose start created its pod (RunnerRevisionCreatedByStart) makes
// no creation of its own: it registers, runs its job and deletes the pod its
// start made. A runner of an earlier revision given the same input creates
// its pod as it always did (an older worker's pool never sends one).
func TestARunnerCreatedByItsStartGoesStraightToRegistering(t *testing.T) {
	for _, c := range []struct {
		revision, creations int
	}{{RunnerRevisionGroupedDone, 1}, {RunnerRevisionCreatedByStart, 0}} {
		rt := newRunnerTest(t, c.revision)
		rt.mockPod()
		rt.onPoolSignal("pool/ci/runnerdeployment/app", func(string, []byte) {})
		in := rt.input(true, RunnerTimings{})
		in.StartsTold, in.PoolWorkflowID, in.Pod.ReadyUntold = true, "pool/ci/runnerdeployment/app", true
		in.Created = &activities.RunnerPodOutput{UID: "uid-1", Created: true, PoolToken: true}
		rt.after(time.Second, func() {
			require.Equal(t, PhaseRegistering, rt.state().Phase)
			require.True(t, rt.state().Pod.Exists)
			rt.env.SignalWorkflow(contract.SignalJobStarted, contract.JobStarted{JobID: 7, RunnerID: 42})
		})
		rt.after(time.Minute, func() { rt.signalPod("Succeeded", false, "2") })
		done := rt.runInput(in)
		require.Equal(t, EndCompleted, done.Reason, "revision %d", c.revision)
		require.Equal(t, c.creations, rt.count("EnsureRunnerPod"), "revision %d", c.revision)
		require.Equal(t, 1, rt.count("DeleteRunnerPod"), "revision %d: its pod, by the UID its start gave", c.revision)
	}
}
