package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// warmStatuses records the HRA's status.warm writes.
func (at *autoscalerTest) warmStatuses() *[]v1alpha1.WarmRunnersStatus {
	var got []v1alpha1.WarmRunnersStatus
	at.env.OnActivity(kube.UpdateHRAWarmStatus, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.HRAWarmStatusInput) error {
			got = append(got, in.Warm)
			return nil
		})
	return &got
}

func (at *autoscalerTest) state() AutoscalerState {
	v, err := at.env.QueryWorkflow(contract.QueryState)
	require.NoError(at.t, err)
	var s AutoscalerState
	require.NoError(at.t, v.Get(&s))
	return s
}

func (at *autoscalerTest) lastRequest() *ScaleRequest { return &at.requests[len(at.requests)-1] }

// readyIn10s has the pool report a 10 s time to ready half a second in.
func (at *autoscalerTest) readyIn10s() {
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalReadyTime, ReadyTimeReport{ReadyTime: 10 * time.Second, Samples: 1})
	}, 500*time.Millisecond)
}

// steadyJobs queues n jobs one every gap from first, each completing after run.
func (at *autoscalerTest) steadyJobs(first, gap, run time.Duration, n int) {
	for i := range n {
		queued := first + time.Duration(i)*gap
		at.job(queued, fmt.Sprintf("q%d", i), int64(i+1), "queued")
		at.job(queued+run, fmt.Sprintf("c%d", i), int64(i+1), "completed")
	}
}

func autoSpec(maxReplicas int) contract.AutoscalerSpec {
	spec := hraSpec(0, maxReplicas)
	spec.AutoIdle = &contract.AutoIdleRunners{}
	return spec
}

// A minute of one job a second raises the buffer to what a 10 s time to
// ready needs; once the jobs stop, it stays for the scale-down delay (30 s
// after the last job) and then goes with the rest: nothing is left at rest.
func TestAnAutoBufferRisesWithTheJobsAndGoesAfterTheScaleDownDelay(t *testing.T) {
	at := newAutoscalerTest(t)
	statuses := at.warmStatuses()
	at.readyIn10s()
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 60) // the last at 60 s, done at 65 s

	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.state().Warm.Runners, "a first job is no rate")
	}, 1500*time.Millisecond)
	var risen int
	at.env.RegisterDelayedCallback(func() {
		s := at.state()
		risen = s.Warm.Runners
		require.InDelta(t, 1.0, s.Warm.Arrivals.Rate, 0.05)
		require.Equal(t, 10*time.Second, s.Warm.ReadyTime)
		require.Equal(t, 14, risen, "the 90th percentile of Poisson(10)")
		req := at.lastRequest()
		require.Equal(t, 5+risen, req.Demanded(), "five jobs running, and the buffer")
		require.Equal(t, &WarmRequest{Runners: risen, Jobs: 5, Rate: s.Warm.Arrivals.Rate, ReadyTime: 10 * time.Second, From: "default-test-workflow-id"},
			req.Warm)
		last := (*statuses)[len(*statuses)-1]
		require.Equal(t, risen, last.Runners)
		require.Equal(t, &metav1.Duration{Duration: 10 * time.Second}, last.TimeToReady)
		require.Regexp(t, `^(5[4-9]|6[0-6])\.\d/min$`, last.ArrivalRate, "written again when it moves by a tenth")
	}, 60*time.Second+500*time.Millisecond)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, risen, at.state().Warm.Runners, "kept through the scale-down delay")
		require.Equal(t, risen, at.lastRequest().Demanded(), "the jobs are done, the buffer is not")
	}, 89*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.state().Warm.Runners)
		require.Zero(t, at.last(), "nothing at rest")
		require.Zero(t, at.lastRequest().Warm.Runners)
		require.Zero(t, (*statuses)[len(*statuses)-1].Runners)
	}, 91*time.Second)
	at.finish(92*time.Second, autoSpec(50))
}

// The buffer is within maxReplicas, and within the annotation's cap.
func TestAnAutoBufferStaysWithinMaxReplicasAndItsCap(t *testing.T) {
	for _, c := range []struct {
		name          string
		maxReplicas   int
		cap, replicas int
	}{
		{"maxReplicas", 8, 0, 8},
		{"cap", 50, 3, 5 + 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := newAutoscalerTest(t)
			at.warmStatuses()
			at.readyIn10s()
			at.steadyJobs(time.Second, time.Second, 5*time.Second, 30)
			at.env.RegisterDelayedCallback(func() {
				require.Equal(t, c.replicas, at.lastRequest().Demanded())
				require.Equal(t, c.replicas-5, at.state().Warm.Runners, "the buffer the pool gets")
			}, 30*time.Second+500*time.Millisecond)
			spec := autoSpec(c.maxReplicas)
			spec.AutoIdle.Max = c.cap
			at.finish(31*time.Second, spec)
		})
	}
}

// A scheduled override in force wins: the buffer is off while it lasts.
func TestAScheduledOverrideWinsOverTheAutoBuffer(t *testing.T) {
	at := newAutoscalerTest(t)
	at.warmStatuses()
	at.readyIn10s()
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 50)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 6, at.lastRequest().Demanded(), "min 1 and five jobs; no buffer")
		require.Zero(t, at.state().Warm.Runners)
	}, 30*time.Second+500*time.Millisecond)
	at.env.RegisterDelayedCallback(func() {
		require.Positive(t, at.state().Warm.Runners, "back once the override ends")
	}, 45*time.Second+500*time.Millisecond)
	one := 1
	spec := autoSpec(50)
	spec.Overrides = []v1alpha1.ScheduledOverride{{
		StartTime: metav1.NewTime(at.start), EndTime: metav1.NewTime(at.start.Add(40 * time.Second)), MinReplicas: &one,
	}}
	at.finish(46*time.Second, spec)
}

// A job passed on to the next autoscaler counts as an arrival there, not
// here: the pool that takes the spill-over keeps warm runners for it.
func TestSpilledJobsCountWhereTheyAreReserved(t *testing.T) {
	at := newAutoscalerTest(t)
	at.warmStatuses()
	at.passedOn("hra/ci/b", false)
	at.queuedWithOverflow(time.Second, "q1", 1, "hra/ci/b")
	at.queuedWithOverflow(2*time.Second, "q2", 2, "hra/ci/b") // at max 1: spills
	at.queuedWithOverflow(3*time.Second, "q2", 2, "hra/ci/b") // a redelivery
	at.job(4*time.Second, "q3", 3, "queued")                  // passed on to here from elsewhere
	at.env.RegisterDelayedCallback(func() {
		a := at.state().Warm.Arrivals
		require.InDelta(t, 1+decay(3*time.Second), a.Count, 1e-9, "jobs 1 and 3")
	}, 5*time.Second)
	at.finish(6*time.Second, autoSpec(1))
}

// The estimate and the pool's time to ready carry over continue-as-new.
func TestTheWarmEstimateCarriesOverContinueAsNew(t *testing.T) {
	at := newAutoscalerTest(t)
	at.warmStatuses()
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalReadyTime, ReadyTimeReport{ReadyTime: 10 * time.Second, Samples: 3})
	}, 500*time.Millisecond)
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 20)
	at.env.RegisterDelayedCallback(func() {
		at.env.SetContinueAsNewSuggested(true)
		at.env.SignalWorkflow(contract.SignalReadyTime, ReadyTimeReport{ReadyTime: 12 * time.Second, Samples: 4})
	}, 20*time.Second+500*time.Millisecond)
	at.env.ExecuteWorkflow(AutoscalerWorkflow, AutoscalerInput{Spec: autoSpec(50)})
	next := continuedWith[AutoscalerInput](t, at.env)
	require.Equal(t, 12*time.Second, next.State.Warm.ReadyTime)
	require.Equal(t, 4, next.State.Warm.Samples)
	require.Greater(t, next.State.Warm.Arrivals.Count, 10.0)
	require.Greater(t, next.State.Warm.Arrivals.Rate, 0.5, "20 jobs in 20 s, over at least 30 s")
	require.Positive(t, next.State.Warm.Runners)
}

// Without the annotation's auto, the autoscaler decides and writes what it
// did before, though it counts the arrivals.
func TestWithoutAutoThereIsNoWarmBuffer(t *testing.T) {
	at := newAutoscalerTest(t)
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 20)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 5, at.lastRequest().Demanded())
		require.Nil(t, at.lastRequest().Warm)
		require.Positive(t, at.state().Warm.Arrivals.Rate)
	}, 20*time.Second+500*time.Millisecond)
	at.finish(21*time.Second, hraSpec(0, 50))
}

// A completed job that waited for its runner started when the runner became
// ready: the autoscaler passes that start to the pool, once. A job that found
// its runner idle, or a redelivery, says nothing of the time to ready.
func TestStartsOfJobsThatWaitedGoToThePool(t *testing.T) {
	at := newAutoscalerTest(t)
	at.warmStatuses()
	t0 := at.start
	completed := func(after time.Duration, delivery string, id int64, runner string, waited time.Duration) {
		at.env.RegisterDelayedCallback(func() {
			at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: delivery, JobID: id, Action: "completed",
				RunnerName: runner, QueuedAt: t0.Add(time.Second), StartedAt: t0.Add(time.Second + waited)})
		}, after)
	}
	at.job(time.Second, "q1", 1, "queued")
	at.job(time.Second, "q2", 2, "queued")
	completed(20*time.Second, "c1", 1, "app-waited", 11*time.Second)
	completed(21*time.Second, "c2", 2, "app-warm", time.Second)
	completed(22*time.Second, "c1", 1, "app-waited", 11*time.Second) // redelivered
	at.env.RegisterDelayedCallback(func() {
		var starts [][]RunnerStart
		for _, r := range at.requests {
			if r.Warm != nil && len(r.Warm.Starts) > 0 {
				starts = append(starts, r.Warm.Starts)
			}
		}
		require.Len(t, starts, 1)
		require.Len(t, starts[0], 1)
		require.Equal(t, "app-waited", starts[0][0].Runner)
		require.True(t, t0.Add(12*time.Second).Equal(starts[0][0].StartedAt))
		require.True(t, t0.Add(time.Second).Equal(starts[0][0].QueuedAt), "the pool counts from the queueing")
		require.Empty(t, at.state().Warm.Starts, "sent once")
	}, 23*time.Second)
	at.finish(24*time.Second, autoSpec(10))
}

// An HRA whose annotation is no longer auto loses its buffer and its
// status.warm at once.
func TestAnHRANoLongerAutoClearsItsWarmStatus(t *testing.T) {
	at := newAutoscalerTest(t)
	var cleared bool
	at.env.OnActivity(kube.UpdateHRAWarmStatus, mock.Anything, mock.MatchedBy(func(in activities.HRAWarmStatusInput) bool { return in.Clear })).
		Return(func(context.Context, activities.HRAWarmStatusInput) error { cleared = true; return nil })
	statuses := at.warmStatuses()
	at.readyIn10s()
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 20)
	spec := autoSpec(50)
	at.env.RegisterDelayedCallback(func() {
		require.Positive(t, at.state().Warm.Runners)
		require.NotEmpty(t, *statuses)
		fixed := spec
		fixed.Generation, fixed.AutoIdle = 2, nil
		at.env.SignalWorkflow(contract.SignalSpec, fixed)
	}, 20*time.Second+500*time.Millisecond)
	at.env.RegisterDelayedCallback(func() {
		require.True(t, cleared)
		require.Nil(t, at.state().Warm.Written)
		require.Nil(t, at.lastRequest().Warm)
		require.Equal(t, 5, at.lastRequest().Demanded(), "the jobs only")
	}, 21*time.Second)
	at.finish(22*time.Second, spec)
}
