package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
)

// A stop that arrives while an idle runner continues as new is drained into the
// state the next run starts from. That run must act on it, not wait for another
// signal: the recorder of workflows/replaytest found runners idle for ever with
// StopRequested set.
func TestRunnerActsOnAStopDrainedAtContinueAsNew(t *testing.T) {
	for name, state := range map[string]RunnerState{
		"stop": {Phase: PhaseIdle, RunnerID: 42, StopRequested: true, StopReason: "scale-down",
			Pod: activities.PodState{UID: "uid-1", ResourceVersion: "1", Exists: true, Phase: "Running", Ready: true}},
		"pod gone": {Phase: PhaseIdle, RunnerID: 42, Pod: activities.PodState{UID: "uid-1", ResourceVersion: "deleted"}},
	} {
		t.Run(name, func(t *testing.T) {
			forEachRevision(t, func(t *testing.T, revision int) {
				rt := newRunnerTest(t, revision)
				rt.mockPod()
				rt.mockRemove()
				rt.env.SetTestTimeout(10 * time.Second)
				in := rt.input(false, RunnerTimings{})
				in.State = &state
				rt.env.ExecuteWorkflow(RunnerWorkflow, in)
				require.True(t, rt.env.IsWorkflowCompleted(), "the runner waited for another signal")
				require.NoError(t, rt.env.GetWorkflowError())
				require.Equal(t, []string{"RemoveRunner", "DeleteRunnerPod"}, rt.names())
			})
		})
	}
}
