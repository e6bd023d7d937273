package workflows

// The pool's part of arcflow.dev/idle-runners: auto. The pool is where a
// runner's creation and its registration are both seen, so it measures the
// time to ready and reports it to the autoscaler that sized the buffer
// (ScaleRequest.Warm.From) when it moves. It also adds up the idle
// runner-seconds the buffer costs, for status.warm and its metric.

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows/contract"
)

// readyTimeReportVersion marks pools that send ready-time signals.
const readyTimeReportVersion = "ready-time-report"

// idleWriteEvery paces status writes that would only bring the idle
// runner-seconds up to date; any other change of the status writes them too.
const idleWriteEvery = time.Minute

// noteReady records a runner's time to ready when it first registers. An
// adopted runner's creation time is its adoption, and the registration-only
// runner never takes jobs: neither says how long a new runner takes.
func (p *poolRun) noteReady(now time.Time, r PoolRunner) {
	if r.Registered || r.Adopted || r.RegistrationOnly || r.Created.IsZero() {
		return
	}
	w := &p.state.Warm
	w.ReadyTimes = append(w.ReadyTimes, now.Sub(r.Created))
	if len(w.ReadyTimes) > readySamples {
		w.ReadyTimes = w.ReadyTimes[len(w.ReadyTimes)-readySamples:]
	}
}

// tendWarm brings the idle runner-seconds up to now and reports the time to
// ready when the autoscaler's is off.
func (p *poolRun) tendWarm(ctx workflow.Context) {
	p.countIdle(workflow.Now(ctx))
	p.reportReadyTime(ctx)
}

// countIdle adds the idle runners since the last count and counts them anew:
// registered runners that are neither stopping nor finishing, beyond the jobs
// the autoscaler holds reservations for. A queued job and a registered idle
// runner meet within a second, so the estimate errs by little; only pools of
// an auto buffer carry the job count.
func (p *poolRun) countIdle(now time.Time) {
	s := &p.state
	w := &s.Warm
	if !w.IdleSince.IsZero() && now.After(w.IdleSince) {
		w.IdleSeconds += float64(w.IdleRunners) * now.Sub(w.IdleSince).Seconds()
	}
	w.IdleSince, w.IdleRunners = now, 0
	if s.Scale == nil || s.Scale.Warm == nil || s.Deleting {
		return
	}
	registered := 0
	for _, r := range s.Runners {
		if r.Registered && !r.Stopping && !r.Finishing && !r.RegistrationOnly {
			registered++
		}
	}
	w.IdleRunners = max(registered-s.Scale.Warm.Jobs, 0)
}

// reportReadyTime signals the autoscaler the pool's time to ready when the
// one it sized the buffer from is off by far, once per change: again only
// when it moves further, or when a newer scale request still shows the old
// one (the autoscaler restarted, or the signal was lost).
func (p *poolRun) reportReadyTime(ctx workflow.Context) {
	s := &p.state
	if s.Scale == nil || s.Scale.Warm == nil || s.Scale.Warm.From == "" {
		return
	}
	ready := ReadyTimePercentile(s.Warm.ReadyTimes)
	if ready == 0 || !farApart(ready, s.Scale.Warm.ReadyTime) {
		return
	}
	if !s.Warm.ReportedAt.IsZero() && !farApart(ready, s.Warm.Reported) && !s.ScaleReceived.After(s.Warm.ReportedAt) {
		return
	}
	if workflow.GetVersion(ctx, readyTimeReportVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	s.Warm.Reported, s.Warm.ReportedAt = ready, workflow.Now(ctx)
	report := ReadyTimeReport{ReadyTime: ready, Samples: len(s.Warm.ReadyTimes)}
	if err := workflow.SignalExternalWorkflow(ctx, s.Scale.Warm.From, "", contract.SignalReadyTime, report).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot report the time to ready", "pool", s.Spec.Name, "autoscaler", s.Scale.Warm.From, "error", err)
	}
}

// farApart: a and b differ by half a second and a tenth of b, at least.
func farApart(a, b time.Duration) bool {
	return (a - b).Abs() >= max(500*time.Millisecond, b/10)
}

// withWarm adds status.warm for a pool of an auto buffer. A change of the
// idle runner-seconds alone is written at most once per idleWriteEvery.
func (p *poolRun) withWarm(now time.Time, status PoolStatus) PoolStatus {
	s := &p.state
	if s.Scale == nil || s.Scale.Warm == nil {
		return status
	}
	status.Warm = v1alpha1.PoolWarmStatus{Runners: s.Scale.Warm.Runners, IdleRunnerSeconds: int64(s.Warm.IdleSeconds)}
	unchanged := status
	unchanged.Warm.IdleRunnerSeconds = s.Status.Warm.IdleRunnerSeconds
	if unchanged == s.Status && now.Sub(s.Warm.IdleWrittenAt) < idleWriteEvery {
		return unchanged
	}
	if status.Warm.IdleRunnerSeconds != s.Status.Warm.IdleRunnerSeconds {
		s.Warm.IdleWrittenAt = now
	}
	return status
}
