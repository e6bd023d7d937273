package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

const hraPool = "pool/ci/runnerdeployment/app"

type scaleSent struct {
	replicas int
	at       time.Duration
}

type autoscalerTest struct {
	testsuite.WorkflowTestSuite
	t      *testing.T
	env    *testsuite.TestWorkflowEnvironment
	start  time.Time
	scales []scaleSent
	// finished are the runner names each scale request passed on.
	finished [][]string
	// requests are the scale requests as sent.
	requests []ScaleRequest
	status   activities.HRAStatusInput
}

func newAutoscalerTest(t *testing.T) *autoscalerTest {
	at := &autoscalerTest{t: t}
	at.env = at.NewTestWorkflowEnvironment()
	// The first workflow task of a test binary pays one-time start-up costs; on a
	// busy machine that passes the default 1 s deadlock detector.
	at.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	at.env.RegisterActivity(&activities.Kubernetes{})
	at.env.RegisterActivity(&activities.GitHub{})
	at.start = at.env.Now()
	at.env.OnSignalExternalWorkflow(mock.Anything, hraPool, "", contract.SignalScale, mock.Anything).Return(
		func(_, _, _, _ string, arg any) error {
			at.scales = append(at.scales, scaleSent{arg.(ScaleRequest).Replicas, at.env.Now().Sub(at.start)})
			at.finished = append(at.finished, arg.(ScaleRequest).Finished)
			at.requests = append(at.requests, arg.(ScaleRequest))
			return nil
		})
	at.env.OnActivity(kube.UpdateHRAStatus, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.HRAStatusInput) error {
			at.status = in
			return nil
		})
	return at
}

func hraSpec(minReplicas, maxReplicas int) contract.AutoscalerSpec {
	return contract.AutoscalerSpec{
		Namespace: "ci", Name: "app", Generation: 1, TargetKind: "RunnerDeployment", TargetName: "app",
		Min: minReplicas, Max: maxReplicas, ScaleDownDelay: 30 * time.Second, Scope: registry.Scope{Repository: "octo/app"},
	}
}

func (at *autoscalerTest) job(at0 time.Duration, delivery string, id int64, action string) {
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: delivery, JobID: id, Action: action})
	}, at0)
}

func (at *autoscalerTest) last() int { return at.scales[len(at.scales)-1].replicas }

func (at *autoscalerTest) finish(after time.Duration, spec contract.AutoscalerSpec) {
	at.env.RegisterDelayedCallback(func() { at.env.SignalWorkflow(contract.SignalDelete, nil) }, after)
	at.env.ExecuteWorkflow(AutoscalerWorkflow, AutoscalerInput{Spec: spec})
	require.True(at.t, at.env.IsWorkflowCompleted())
	require.NoError(at.t, at.env.GetWorkflowError())
}

func TestAFirstJobScalesAtOnceAndABurstIsBatched(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(time.Second, "d1", 1, "queued")
	at.job(time.Second+100*time.Millisecond, "d2", 2, "queued")
	at.job(time.Second+200*time.Millisecond, "d3", 3, "queued")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, []scaleSent{{0, 0}, {1, time.Second}}, at.scales, "the first job is not delayed")
	}, 2*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, scaleSent{3, 4 * time.Second}, at.scales[len(at.scales)-1], "the rest at the window's end")
		require.Len(t, at.scales, 3)
	}, 5*time.Second)
	spec := hraSpec(0, 10)
	spec.BatchWindow = 3 * time.Second // ARC's window
	at.finish(6*time.Second, spec)
}

func TestWithoutABatchWindowEveryJobScalesAtOnce(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(time.Second, "d1", 1, "queued")
	at.job(time.Second+100*time.Millisecond, "d2", 2, "queued")
	at.job(time.Second+200*time.Millisecond, "d3", 3, "queued")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, []scaleSent{{0, 0}, {1, time.Second}, {2, time.Second + 100*time.Millisecond}, {3, time.Second + 200*time.Millisecond}}, at.scales)
	}, 2*time.Second)
	at.finish(3*time.Second, hraSpec(0, 10))
}

// An idle buffer keeps its runners at rest and on top of every job, and the
// scale-down delay holds the count as it does without one.
func TestAnIdleBufferRidesOnTopOfTheJobs(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(time.Second, "d1", 1, "queued")
	at.job(2*time.Second, "d2", 2, "queued")
	at.job(10*time.Second, "d3", 1, "completed")
	at.job(11*time.Second, "d4", 2, "completed")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, scaleSent{2, 0}, at.scales[0], "two idle runners before any job")
		require.Equal(t, 4, at.last(), "two jobs and two idle")
	}, 5*time.Second)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 4, at.last(), "held for the scale-down delay") }, 20*time.Second)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 2, at.last(), "back to the buffer, not to zero") }, 45*time.Second)
	spec := hraSpec(0, 10)
	spec.IdleRunners = 2
	at.finish(46*time.Second, spec)
}

func TestCompletedJobsScaleDownAfterTheDelay(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(time.Second, "d1", 1, "queued")
	at.job(10*time.Second, "d2", 1, "completed")
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 1, at.last(), "held for the scale-down delay") }, 20*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, scaleSent{0, 31 * time.Second}, at.scales[len(at.scales)-1], "a timer at the delay's end")
		require.Equal(t, 0, *at.status.DesiredReplicas)
		require.NotNil(t, at.status.LastSuccessfulScaleOutTime)
	}, 40*time.Second)
	at.finish(41*time.Second, hraSpec(0, 10))
}

func TestDuplicateAndReorderedDeliveriesEndTheSame(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(1*time.Second, "c2", 2, "completed") // before its queued event
	at.job(5*time.Second, "q1", 1, "queued")
	at.job(9*time.Second, "q1", 1, "queued") // duplicate delivery
	at.job(13*time.Second, "q2", 2, "queued")
	at.job(17*time.Second, "q3", 3, "queued")
	at.job(21*time.Second, "q3-redelivered", 3, "queued")
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 2, at.last(), "jobs 1 and 3") }, 30*time.Second)
	at.finish(31*time.Second, hraSpec(0, 10))
}

func TestReservationsExpireOnATimer(t *testing.T) {
	at := newAutoscalerTest(t)
	spec := hraSpec(1, 10)
	spec.TriggerDuration = 5 * time.Minute
	at.job(time.Second, "d1", 1, "queued")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.last(), "min 1 after expiry and the delay")
		require.Equal(t, 5*time.Minute+time.Second, at.scales[len(at.scales)-1].at, "expired exactly at its time")
	}, 6*time.Minute)
	at.finish(7*time.Minute, spec)
	require.Equal(t, []int{1, 2, 1}, replicasOf(at.scales))
}

func replicasOf(s []scaleSent) []int {
	var out []int
	for _, x := range s {
		out = append(out, x.replicas)
	}
	return out
}

func TestStarvedReservationsBeyondMaxKeepWaiting(t *testing.T) {
	at := newAutoscalerTest(t)
	spec := hraSpec(0, 1)
	spec.TriggerDuration = 10 * time.Minute
	spec.BatchWindow = time.Millisecond
	at.job(time.Second, "d1", 1, "queued")
	at.job(2*time.Second, "d2", 2, "queued") // beyond max 1: waits for a runner
	at.job(9*time.Minute, "d3", 1, "completed")
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.last(), "job 2's reservation did not expire while it waited")
	}, 15*time.Minute)
	at.finish(16*time.Minute, spec)
}

func TestForceScaleFromTheCLIAndItsEnd(t *testing.T) {
	at := newAutoscalerTest(t)
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalForceScale, ForceScale{Replicas: 5, Duration: "30m"})
	}, time.Second)
	at.env.RegisterDelayedCallback(func() {
		at.env.SignalWorkflow(contract.SignalForceScale, ForceScale{Replicas: 9, Duration: "soon"}) // bad input: ignored
	}, 2*time.Second)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 5, at.last()) }, time.Minute)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 0, at.last(), "back to the computed count after 30 minutes and the delay")
	}, 32*time.Minute)
	at.finish(33*time.Minute, hraSpec(0, 3))
}

func TestAutoscalerContinuesAsNewWithReservations(t *testing.T) {
	at := newAutoscalerTest(t)
	at.job(time.Second, "d1", 1, "queued")
	at.env.RegisterDelayedCallback(func() {
		at.env.SetContinueAsNewSuggested(true)
		at.env.SignalWorkflow(contract.SignalJob, contract.JobEvent{DeliveryID: "d2", JobID: 2, Action: "queued"})
	}, 10*time.Second)
	at.env.ExecuteWorkflow(AutoscalerWorkflow, AutoscalerInput{Spec: hraSpec(0, 10)})
	next := continuedWith[AutoscalerInput](t, at.env)
	require.Len(t, next.State.Reservations.Active, 2)
	require.Contains(t, next.State.Reservations.Deliveries, "d1", "delivery IDs carry over, so a redelivery after continue-as-new changes nothing")
}

func TestReconcileReservesQueuedJobsThatNoWebhookAnnounced(t *testing.T) {
	at := newAutoscalerTest(t)
	spec := hraSpec(0, 10)
	spec.Repositories = []string{"octo/app"}
	spec.ReconcilePeriod = 5 * time.Minute
	spec.TriggerDuration = time.Hour
	calls := 0
	at.env.OnActivity(gh.ListQueuedJobs, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.QueuedJobsInput) (activities.QueuedJobsOutput, error) {
			calls++
			require.True(t, in.ByRun)
			if calls == 1 {
				require.Empty(t, in.KnownRuns)
				// Webhooks for jobs 7 and 8, of runs 70 and 80, were lost.
				return activities.QueuedJobsOutput{Queued: []int64{7, 8}, QueuedRuns: []int64{70, 80}, OpenRuns: []int64{70, 80}}, nil
			}
			require.ElementsMatch(t, []int64{70, 80}, in.KnownRuns, "runs it knows are not asked about")
			return activities.QueuedJobsOutput{OpenRuns: []int64{70}}, nil // run 80 finished; its completion was lost too
		})
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 2, at.last()) }, time.Minute)
	at.env.RegisterDelayedCallback(func() { require.Equal(t, 1, at.last(), "job 8's reservation released") }, 11*time.Minute)
	at.finish(12*time.Minute, spec)
	require.Equal(t, 3, calls, "one list per reconcile period")
}
