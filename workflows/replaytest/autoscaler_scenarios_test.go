package replaytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

func autoscalerSpec(name string) contract.AutoscalerSpec {
	return contract.AutoscalerSpec{
		Namespace: ns, Name: name, Generation: 1, TargetKind: v1alpha1.KindRunnerDeployment, TargetName: name,
		Min: 0, Max: 5, ScaleDownDelay: time.Second, TriggerDuration: 10 * time.Minute,
		BatchWindow: 300 * time.Millisecond, Scope: scope,
	}
}

// autoscaled is an autoscaler with its target pool, both recorded.
type autoscaled struct {
	r                          *recorder
	hra, hraRun, pool, poolRun string
}

func (r *recorder) startAutoscaled(spec contract.AutoscalerSpec) *autoscaled {
	a := &autoscaled{r: r, hra: contract.AutoscalerWorkflowID(spec.Namespace, spec.Name)}
	a.pool, a.poolRun = r.startPool(poolSpec(spec.TargetName, spec.TargetKind, 0, true))
	a.hraRun = r.start(a.hra, workflows.AutoscalerWorkflow, workflows.AutoscalerInput{Spec: spec})
	return a
}

func (a *autoscaled) job(delivery string, id int64, action string) {
	a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: delivery, JobID: id, Action: action, Repository: scope.Repository})
}

// sent waits until the autoscaler sent the pool n replicas with that many
// reservations active.
func (a *autoscaled) sent(replicas, reservations int) workflows.AutoscalerState {
	a.r.t.Helper()
	return waitState(a.r, a.hra, "replicas and reservations sent", func(s workflows.AutoscalerState) bool {
		return s.Sent != nil && s.Sent.Replicas == replicas && len(s.Reservations.Active) == reservations
	})
}

// finish deletes both and exports the autoscaler and the pool (not its runners,
// which the pool scenarios cover).
func (a *autoscaled) finish() {
	r := a.r
	r.t.Helper()
	r.signal(a.hra, contract.SignalDelete, nil)
	r.waitDone(a.hra, nil)
	r.signal(a.pool, contract.SignalDelete, nil)
	r.waitDone(a.pool, nil)
	r.export("", a.hra, a.hraRun)
	r.export("-pool", a.pool, a.poolRun)
	r.finish()
}

func TestRecordAutoscalerHistories(t *testing.T) {
	needServers(t)
	t.Run("autoscaler-job-batch", func(t *testing.T) {
		// One job at once, two batched with a redelivery, a spec change, completions,
		// then the scale-down delay.
		spec := autoscalerSpec("autoscaler-job-batch")
		a := newRecorder(t, plain, "autoscaler-job-batch").startAutoscaled(spec)
		a.job("d1", 1, "queued")
		a.job("d2", 2, "queued")
		a.job("d3", 3, "queued")
		a.job("d1", 1, "queued")
		a.sent(3, 3)
		spec.Generation, spec.Max = 2, 4
		a.r.signal(a.hra, contract.SignalSpec, spec)
		a.job("d4", 1, "completed")
		a.job("d5", 2, "completed")
		a.job("d6", 3, "completed")
		a.sent(0, 0)
		a.finish()
	})
	t.Run("autoscaler-job-group", func(t *testing.T) {
		// The webhook's group commit: several deliveries in one jobs signal.
		a := newRecorder(t, plain, "autoscaler-job-group").startAutoscaled(autoscalerSpec("autoscaler-job-group"))
		a.r.signal(a.hra, contract.SignalJobs, []contract.JobEvent{
			{DeliveryID: "d1", JobID: 1, Action: "queued"}, {DeliveryID: "d2", JobID: 2, Action: "queued"},
		})
		a.sent(2, 2)
		a.r.signal(a.hra, contract.SignalJobs, []contract.JobEvent{
			{DeliveryID: "d3", JobID: 1, Action: "completed"}, {DeliveryID: "d2", JobID: 2, Action: "queued"},
			{DeliveryID: "d4", JobID: 2, Action: "completed"},
		})
		a.sent(0, 0)
		a.finish()
	})
	t.Run("autoscaler-reservation-expiry", func(t *testing.T) {
		spec := autoscalerSpec("autoscaler-reservation-expiry")
		spec.TriggerDuration, spec.ScaleDownDelay = 3*time.Second, 0 // long enough to see it before it expires
		a := newRecorder(t, plain, "autoscaler-reservation-expiry").startAutoscaled(spec)
		a.job("d1", 10, "queued")
		a.sent(1, 1)
		a.sent(0, 0) // expired
		a.job("d2", 10, "completed")
		waitState(a.r, a.hra, "the late completion seen", func(s workflows.AutoscalerState) bool {
			_, seen := s.Reservations.Deliveries["d2"]
			return seen
		})
		a.finish()
	})
	t.Run("autoscaler-force-scale", func(t *testing.T) {
		a := newRecorder(t, plain, "autoscaler-force-scale").startAutoscaled(autoscalerSpec("autoscaler-force-scale"))
		a.r.signal(a.hra, contract.SignalForceScale, workflows.ForceScale{Replicas: 1, Duration: "soon"}) // ignored
		a.r.signal(a.hra, contract.SignalForceScale, workflows.ForceScale{Replicas: 2, Duration: "3s"})
		a.sent(2, 0)
		waitState(a.r, a.hra, "force-scale over and held count released", func(s workflows.AutoscalerState) bool {
			return s.Force == nil && s.Sent != nil && s.Sent.Replicas == 0
		})
		a.finish()
	})
	// Pull metrics and the missed-webhook reconcile, on their timers. The
	// history autoscaler-metrics-reconcile was recorded by the same scenario
	// before the reconcile asked about runs; it is replayed, not recorded again.
	t.Run("autoscaler-reconcile-by-run", func(t *testing.T) { recordMetricsReconcile(t, "autoscaler-reconcile-by-run") })
	t.Run("autoscaler-continue-as-new", func(t *testing.T) {
		// Reservations made in one run are completed in a later one.
		spec := autoscalerSpec("autoscaler-continue-as-new")
		spec.Max = 10
		a := newRecorder(t, compact, "autoscaler-continue-as-new").startAutoscaled(spec)
		jobs := 0
		for !a.r.continued(a.hra, a.hraRun) {
			require.Less(t, jobs, spec.Max, "no continue-as-new after %d jobs", jobs)
			jobs++
			a.job(fmt.Sprintf("q%d", jobs), int64(jobs), "queued")
			a.sent(jobs, jobs)
		}
		for i := 1; i <= jobs; i++ {
			a.job(fmt.Sprintf("c%d", i), int64(i), "completed")
		}
		a.sent(0, 0)
		a.finish()
	})
}

// recordMetricsReconcile records an autoscaler whose pull metric and
// missed-webhook reconcile find a job, then find it gone.
func recordMetricsReconcile(t *testing.T, name string) {
	spec := autoscalerSpec(name)
	spec.Metrics = []v1alpha1.MetricSpec{{Type: v1alpha1.MetricTotalNumberOfQueuedAndInProgressWorkflowRuns}}
	spec.Repositories = []string{scope.Repository}
	spec.SyncPeriod, spec.ReconcilePeriod, spec.ScaleDownDelay = time.Second, time.Second, 0
	fakes.mu.Lock()
	fakes.queued, fakes.suggested = []int64{77}, 1
	fakes.mu.Unlock()
	a := newRecorder(t, plain, name).startAutoscaled(spec)
	a.sent(1, 1)
	fakes.mu.Lock()
	fakes.queued, fakes.suggested = nil, 0
	fakes.mu.Unlock()
	a.sent(0, 0)
	a.finish()
}
