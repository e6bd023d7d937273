package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// Runners told their starts keep no registration timer: the pool keeps one,
// and at the registration timeout asks only the runners it heard no start of
// to check, once each.
func TestAPoolAsksItsSilentRunnersToCheckTheirRegistration(t *testing.T) {
	pt := newPoolTest(t)
	var checked []call
	pt.env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", contract.SignalRegistrationCheck, mock.Anything).Return(
		func(_, workflowID, _, _ string, _ any) error {
			checked = append(checked, call{strings.TrimPrefix(workflowID, contract.RunnerWorkflowID("ci", "")), pt.env.Now().Sub(pt.start)})
			return nil
		})
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, NamesFinished: true, StartsTold: true, StartsDelivered: true})
	})
	pt.at(2*time.Minute, func() {
		require.Len(t, pt.created, 2)
		for _, c := range pt.created {
			require.True(t, c.poolWakes, "%s waits for its pool's check", c.name)
			require.Equal(t, RunnerRevisionLatest, c.revision, "the latest revision, which waits for its pool as RunnerRevisionPoolWakes does")
		}
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2, NamesFinished: true, StartsTold: true, StartsDelivered: true,
			Running: []string{pt.created[0].name}})
	})
	pt.deleteAndDrain(12 * time.Minute)
	pt.run(spec(0, "h1", true))
	require.Equal(t, []call{{pt.created[1].name, 10*time.Minute + time.Second}}, checked,
		"the runner whose job started is not asked; the other is, at its registration timeout")
}

// A fresh pool's first runners, made before any job start was heard (every
// runner of a first burst), wait for the pool's check too: the start that
// tells them they registered comes the same way as later ones. Only their
// list reads stay impatient until a start was heard.
func TestAFreshPoolsFirstRunnersWaitForItsCheck(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3, NamesFinished: true, StartsTold: true})
	})
	pt.at(time.Minute, func() {
		require.Len(t, pt.created, 3)
		for _, c := range pt.created {
			require.True(t, c.poolWakes, "%s waits for its pool's check", c.name)
			require.False(t, c.patient, "%s reads a fresh list: no start was heard yet", c.name)
			require.True(t, c.startsTold, c.name)
		}
	})
	pt.deleteAndDrain(2 * time.Minute)
	pt.run(spec(0, "h1", true))
}

// Runners that ended together reach their pool in one grouped signal
// (RunnerRevisionGroupedDone); the pool takes each end as it takes a lone one,
// and starts its runners on that revision.
func TestAPoolTakesRunnersEndsGrouped(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 3, NamesFinished: true, StartsTold: true})
	})
	pt.at(time.Minute, func() {
		require.Len(t, pt.created, 3)
		for _, c := range pt.created {
			require.GreaterOrEqual(t, c.revision, RunnerRevisionGroupedDone, c.name)
		}
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 0, NamesFinished: true, StartsTold: true,
			Finished: []string{pt.created[0].name, pt.created[1].name}})
		pt.env.SignalWorkflow(contract.SignalRunnersDone, []RunnerDone{
			{Name: pt.created[0].name, Reason: EndCompleted}, {Name: pt.created[1].name, Reason: EndCompleted},
		})
	})
	pt.at(2*time.Minute, func() {
		var left []string
		for _, r := range pt.state().Runners {
			left = append(left, r.Name)
		}
		require.Equal(t, []string{pt.created[2].name}, left, "both grouped ends taken")
	})
	pt.deleteAndDrain(3 * time.Minute)
	pt.run(spec(0, "h1", true))
}
