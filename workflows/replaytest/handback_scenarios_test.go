package replaytest

import (
	"context"
	"testing"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// HandBackReservations stands in for the write into the HRA: it changes
// nothing and says it wrote what it was given.
func (k *fakeKubernetes) HandBackReservations(_ context.Context, in calls.HandBackInput) (calls.HandBackOutput, error) {
	return calls.HandBackOutput{Added: len(in.Add), Removed: len(in.Remove)}, nil
}

// A drain's hold hands the queued jobs back to ARC (not the started one),
// then a job queued later; a completion takes its entry out, and the end of
// the hold the rest.
func TestRecordHandBackHistories(t *testing.T) {
	needServers(t)
	t.Run("autoscaler-hand-back", func(t *testing.T) {
		spec := autoscalerSpec("autoscaler-hand-back")
		a := newRecorder(t, plain, "autoscaler-hand-back").startAutoscaled(spec)
		a.job("q1", 1, "queued")
		a.job("q2", 2, "queued")
		a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "s2", JobID: 2, Action: "in_progress",
			RunnerName: "autoscaler-hand-back-r2", RunnerID: 22, Repository: scope.Repository})
		waitState(a.r, a.hra, "job 2 started", func(s workflows.AutoscalerState) bool {
			return len(s.Reservations.Active) == 2 && s.Reservations.Active[1].Started
		})
		a.r.signal(a.hra, contract.SignalForceScale, workflows.ForceScale{Replicas: 0, Duration: "1h", HandBack: true})
		handedBack := func(what string, ids ...int64) {
			waitState(a.r, a.hra, what, func(s workflows.AutoscalerState) bool {
				if len(s.HandedBack) != len(ids) {
					return false
				}
				for _, id := range ids {
					if _, ok := s.HandedBack[id]; !ok {
						return false
					}
				}
				return true
			})
		}
		handedBack("job 1 handed back", 1)
		a.job("q3", 3, "queued")
		handedBack("job 3 handed back too", 1, 3)
		a.job("c1", 1, "completed")
		handedBack("job 1's entry removed", 3)
		a.r.signal(a.hra, contract.SignalForceScale, workflows.ForceScale{Replicas: 0, Duration: "1s"})
		handedBack("the hold ended")
		a.finish()
	})
}
