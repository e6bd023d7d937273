package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
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

// A runner of RunnerRevisionLocal that deleted a live pod waits to hear it gone,
// so the pod's last signals do not race its completion; it stops waiting after
// PodGoneWait if they never come.
func TestAStoppedRunnerEndsWhenItsPodIsGone(t *testing.T) {
	for name, gone := range map[string]bool{"pod gone": true, "no word": false} {
		t.Run(name, func(t *testing.T) {
			rt := newRunnerTest(t, RunnerRevisionLocal)
			rt.mockPod()
			rt.mockFind(0)
			rt.mockRemove()
			rt.after(time.Second, func() { rt.signalPod("Running", true, "1") })
			rt.after(time.Minute, func() { rt.env.SignalWorkflow(contract.SignalStop, StopRequest{}) })
			if gone {
				rt.after(time.Minute+5*time.Second, rt.signalPodDeleted)
			}
			rt.run(false, RunnerTimings{})
			want := time.Minute + 2*time.Minute // PodGoneWait's default
			if gone {
				want = time.Minute + 5*time.Second
			}
			require.Equal(t, want, rt.env.Now().Sub(rt.start), "ended when its pod was gone, or after podGoneWait")
		})
	}
}
