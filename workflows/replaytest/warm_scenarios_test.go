package replaytest

import (
	"testing"
	"time"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// startWarmBurst starts the scenario's autoscaler with an auto buffer (at most
// 3, maxReplicas 10, the scale-down delay given) and its pool, with another
// autoscaler of its scope hearing jobs when busyScope, reports a 10 s time to
// ready and queues five jobs.
func startWarmBurst(t *testing.T, scenario string, scaleDownDelay time.Duration, busyScope bool) *autoscaled {
	spec := autoscalerSpec(scenario)
	spec.AutoIdle = &contract.AutoIdleRunners{Max: 3}
	spec.ScaleDownDelay, spec.Max = scaleDownDelay, 10
	if busyScope {
		fakes.mu.Lock()
		fakes.scopes[spec.Name] = time.Now()
		fakes.mu.Unlock()
	}
	a := newRecorder(t, plain, scenario).startAutoscaled(spec)
	a.r.signal(a.hra, contract.SignalReadyTime, workflows.ReadyTimeReport{ReadyTime: 10 * time.Second, Samples: 1})
	for i, id := range []int64{1, 2, 3, 4, 5} {
		a.job("q"+string(rune('1'+i)), id, "queued")
	}
	return a
}

// An autoscaler with arcflow.dev/idle-runners: auto (issue 29) and its pool:
// the pool's runners register and it reports its time to ready, five jobs
// raise a buffer, their completions (one that waited for its runner) pass a
// start to the pool, and after the scale-down delay nothing is left.
func TestRecordWarmHistories(t *testing.T) {
	needServers(t)
	t.Run("autoscaler-warm-auto", func(t *testing.T) {
		// The buffer lives for the scale-down delay after the last arrival,
		// and the test must see it by polling queries: a delay of 2 s was
		// shorter than one query on a loaded dev server (5 s seen), so the
		// test waited for a state that had come and gone. 15 s is not.
		a := startWarmBurst(t, "autoscaler-warm-auto", 15*time.Second, false)
		s := waitState(a.r, a.hra, "a warm buffer sent", func(s workflows.AutoscalerState) bool {
			return s.Sent != nil && s.Sent.Warm != nil && s.Sent.Warm.Runners > 0 && len(s.Reservations.Active) == 5
		})
		pool := waitState(a.r, a.pool, "the pool's runners registered", func(p workflows.PoolState) bool {
			registered := 0
			for _, r := range p.Runners {
				if r.Registered {
					registered++
				}
			}
			// At least the five jobs' runners: an earlier, smaller scale may
			// have all its runners registered first.
			return p.Scale != nil && p.Scale.Warm != nil && registered == p.Scale.Replicas && registered >= 5
		})
		queued := s.Warm.Arrivals.Last.Add(-time.Second)
		for i, r := range pool.Runners[:5] {
			a.r.signal(a.hra, contract.SignalJob, contract.JobEvent{DeliveryID: "c" + string(rune('1'+i)), JobID: int64(i + 1),
				Action: "completed", RunnerName: r.Name, QueuedAt: queued, StartedAt: queued.Add(time.Duration(i) * 5 * time.Second)})
		}
		waitState(a.r, a.hra, "the buffer gone after the delay", func(s workflows.AutoscalerState) bool {
			return s.Sent != nil && s.Sent.Replicas == 0 && s.Warm.Runners == 0
		})
		a.finish()
	})
}

// An auto buffer whose own jobs stopped for the scale-down delay while another
// autoscaler of its scope still hears jobs (GetVersion warm-scope-hold): it
// asks about the scope, keeps its buffer, asks again once that job is older
// than the delay and the lag, and rests when the scope went quiet.
func TestRecordWarmScopeHistories(t *testing.T) {
	needServers(t)
	t.Run("autoscaler-warm-scope", func(t *testing.T) {
		a := startWarmBurst(t, "autoscaler-warm-scope", 2*time.Second, true)
		waitState(a.r, a.hra, "held past its own delay for the scope", func(s workflows.AutoscalerState) bool {
			return s.Warm.Runners > 0 && !s.Warm.ScopeBusyUntil.IsZero()
		})
		fakes.mu.Lock()
		delete(fakes.scopes, "autoscaler-warm-scope") // the scope goes quiet (the spec is named after the scenario)
		fakes.mu.Unlock()
		waitState(a.r, a.hra, "rested with the scope", func(s workflows.AutoscalerState) bool {
			return s.Warm.Runners == 0 && s.Warm.RestedAfter.Equal(s.Warm.Arrivals.Last)
		})
		for i := range 5 {
			a.job("c"+string(rune('1'+i)), int64(i+1), "completed")
		}
		waitState(a.r, a.hra, "nothing left", func(s workflows.AutoscalerState) bool {
			return s.Sent != nil && s.Sent.Replicas == 0
		})
		a.finish()
	})
}
