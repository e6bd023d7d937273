package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// The pool measures each runner's pod created -> registered, reports the
// percentile to the autoscaler that sized the buffer when the autoscaler's is
// off, and counts its registered runners beyond the autoscaler's jobs as idle.
func TestAPoolReportsItsTimeToReadyAndCountsIdleRunnerSeconds(t *testing.T) {
	pt := newPoolTest(t)
	var reports []ReadyTimeReport
	pt.env.OnSignalExternalWorkflow(mock.Anything, "hra/ci/app", "", contract.SignalReadyTime, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			reports = append(reports, arg.(ReadyTimeReport))
			return nil
		})
	warm := func(replicas, jobs int, ready time.Duration) ScaleRequest {
		return ScaleRequest{Replicas: replicas, Warm: &WarmRequest{Runners: 3, Jobs: jobs, Rate: 0.5, ReadyTime: ready, From: "hra/ci/app"}}
	}
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, warm(3, 0, 0)) })
	pt.at(11*time.Second, pt.registerAll)
	pt.at(12*time.Second, func() {
		require.Equal(t, []ReadyTimeReport{{ReadyTime: 10 * time.Second, Samples: 1}}, reports, "the autoscaler knew none: the first runner tells")
		pt.env.SignalWorkflow(contract.SignalScale, warm(4, 1, 10*time.Second)) // a job took one
	})
	pt.at(13*time.Second, func() {
		require.Len(t, reports, 1, "the autoscaler has it now")
		require.Equal(t, v1alpha1.PoolWarmStatus{Runners: 3, IdleRunnerSeconds: 3}, pt.status.Warm, "three idle for a second")
		state := pt.state()
		require.Equal(t, 0.5, state.Scale.Warm.Rate, "the state shows what the buffer was sized from")
		require.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}, state.Warm.ReadyTimes)
	})
	pt.at(80*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: pt.created[3].name}) // 68 s: a slow node
	})
	pt.at(81*time.Second, func() {
		require.Equal(t, ReadyTimeReport{ReadyTime: 68 * time.Second, Samples: 4}, reports[len(reports)-1], "the 90th percentile of four")
		require.Equal(t, int64(3+2*68), pt.status.Warm.IdleRunnerSeconds, "two idle from 12 s to 80 s")
		pt.env.SignalWorkflow(contract.SignalScale, warm(4, 1, 68*time.Second))
	})
	pt.at(100*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, warm(4, 1, 68*time.Second)) })
	pt.at(101*time.Second, func() {
		require.Equal(t, int64(3+2*68), pt.status.Warm.IdleRunnerSeconds, "idle seconds alone are written once a minute")
	})
	pt.at(150*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, warm(4, 1, 68*time.Second)) })
	pt.at(151*time.Second, func() {
		require.Equal(t, int64(3+2*68+3*70), pt.status.Warm.IdleRunnerSeconds)
		require.Len(t, reports, 2)
	})
	pt.deleteAndDrain(160 * time.Second)
	pt.run(spec(0, "h1", true))
}

// A pool whose autoscaler keeps no auto buffer reports nothing and writes
// no status.warm, but keeps its runners' times to ready in its state.
func TestAPoolWithoutAnAutoBufferReportsNothing(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(5*time.Second, pt.registerAll)
	pt.at(6*time.Second, func() {
		require.Zero(t, pt.status.Warm)
		require.Len(t, pt.state().Warm.ReadyTimes, 2)
	})
	pt.deleteAndDrain(7 * time.Second)
	pt.run(spec(0, "h1", true))
}

// A job that waited for its runner started when the runner became ready: its
// start less the runner's creation is a time to ready without the lag of the
// registration check, for a runner that ended already too; once there is
// one, the pool reports those.
func TestAPoolTakesItsTimeToReadyFromJobsThatWaited(t *testing.T) {
	pt := newPoolTest(t)
	var reports []ReadyTimeReport
	pt.env.OnSignalExternalWorkflow(mock.Anything, "hra/ci/app", "", contract.SignalReadyTime, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			reports = append(reports, arg.(ReadyTimeReport))
			return nil
		})
	scale := func(replicas int, ready time.Duration, starts ...RunnerStart) ScaleRequest {
		return ScaleRequest{Replicas: replicas, Warm: &WarmRequest{Runners: 0, Jobs: replicas, ReadyTime: ready, From: "hra/ci/app", Starts: starts}}
	}
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, scale(2, 0)) })
	pt.at(25*time.Second, pt.registerAll) // heard 24 s after creation: the check ran late
	pt.at(26*time.Second, func() {
		require.Equal(t, 24*time.Second, reports[len(reports)-1].ReadyTime, "registrations until a job says more")
		pt.done(pt.created[0].name, EndCompleted) // its job is done, and it ends before the completion comes
	})
	pt.at(27*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, scale(1, 24*time.Second,
			RunnerStart{Runner: pt.created[0].name, StartedAt: pt.start.Add(11 * time.Second)},
			RunnerStart{Runner: pt.created[1].name, StartedAt: pt.start.Add(12 * time.Second)},
			RunnerStart{Runner: "another-pools-runner", StartedAt: pt.start.Add(5 * time.Second)}))
	})
	pt.at(28*time.Second, func() {
		require.Equal(t, ReadyTimeReport{ReadyTime: 11 * time.Second, Samples: 2}, reports[len(reports)-1])
		state := pt.state()
		require.Equal(t, []time.Duration{10 * time.Second, 11 * time.Second}, state.Warm.JobReadyTimes)
		require.Empty(t, state.Scale.Warm.Starts, "the state keeps the samples, not the requests")
	})
	pt.deleteAndDrain(30 * time.Second)
	pt.run(spec(0, "h1", true))
}

// A job queued before its runner was created waited for arcflow to hear of
// it as well: its time to ready counts from its queueing, which the buffer
// must cover. A job queued after its runner's creation counts from the
// creation, as before; a start without a queueing time (an autoscaler before
// it sent one) too.
func TestAPoolCountsTheTimeToReadyFromTheJobsQueueing(t *testing.T) {
	pt := newPoolTest(t)
	pt.env.OnSignalExternalWorkflow(mock.Anything, "hra/ci/app", "", contract.SignalReadyTime, mock.Anything).Return(nil)
	scale := func(replicas int, starts ...RunnerStart) ScaleRequest {
		return ScaleRequest{Replicas: replicas, Warm: &WarmRequest{Jobs: replicas, ReadyTime: 5 * time.Second, From: "hra/ci/app", Starts: starts}}
	}
	pt.at(4*time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, scale(3)) }) // created at 4 s
	pt.at(12*time.Second, pt.registerAll)
	pt.at(13*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, scale(3,
			RunnerStart{Runner: pt.created[0].name, StartedAt: pt.start.Add(10 * time.Second), QueuedAt: pt.start.Add(time.Second)},
			RunnerStart{Runner: pt.created[1].name, StartedAt: pt.start.Add(11 * time.Second), QueuedAt: pt.start.Add(6 * time.Second)},
			RunnerStart{Runner: pt.created[2].name, StartedAt: pt.start.Add(12 * time.Second)}))
	})
	pt.at(14*time.Second, func() {
		require.Equal(t, []time.Duration{9 * time.Second, 7 * time.Second, 8 * time.Second}, pt.state().Warm.JobReadyTimes)
	})
	pt.deleteAndDrain(20 * time.Second)
	pt.run(spec(0, "h1", true))
}
