package workflows

// The pool's part of arcflow.dev/idle-runners: auto. The pool is where a
// runner's creation is known, so it measures the time to ready and reports it
// to the autoscaler that sized the buffer (ScaleRequest.Warm.From) when it
// moves. The end of the time to ready is the start of a job that waited for
// the runner (the autoscaler passes those on from completed deliveries,
// WarmRequest.Starts), or, until there is one, the runner's registration as
// the pool heard of it. It also adds up the idle runner-seconds the buffer
// costs, for status.warm and its metric.

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

// endedRunners bounds the runners a pool remembers after their end: a job's
// start comes with its completion, which may pass its runner's end.
const endedRunners = 50

// noteEnded remembers an ended runner's creation, for a pool of an auto buffer.
func (p *poolRun) noteEnded(r PoolRunner) {
	if p.state.Scale == nil || p.state.Scale.Warm == nil || r.Adopted || r.RegistrationOnly || r.Created.IsZero() {
		return
	}
	w := &p.state.Warm
	w.Ended = append(w.Ended, EndedRunner{Name: r.Name, Created: r.Created})
	if len(w.Ended) > endedRunners {
		w.Ended = w.Ended[len(w.Ended)-endedRunners:]
	}
}

// noteStarts turns the starts of jobs that waited for their runner into
// times to ready: such a job started when its runner became ready. The time
// counts from the runner's creation or, when the job was queued before it,
// from the job's queueing: a warm runner a job takes is replaced by a runner
// created only once arcflow heard of that job, so the buffer must cover
// arcflow's own reaction too, seconds on a loaded machine (counted from the
// creation alone, the buffer ran dry there and most jobs waited). A runner
// the pool does not know, or did not create (adopted), says nothing; nor
// does a static runner's later job, which came long after it was ready, so
// only ephemeral pools count them.
func (p *poolRun) noteStarts(w *WarmRequest) {
	if w == nil {
		return
	}
	starts := w.Starts
	w.Starts = nil // the state keeps the samples, not the requests
	if !p.state.Spec.Ephemeral {
		return
	}
	for _, st := range starts {
		created, ok := p.createdOf(st.Runner)
		if !st.QueuedAt.IsZero() && st.QueuedAt.Before(created) {
			created = st.QueuedAt
		}
		if d := st.StartedAt.Sub(created); ok && d > 0 {
			pw := &p.state.Warm
			pw.JobReadyTimes = append(pw.JobReadyTimes, d)
			if len(pw.JobReadyTimes) > readySamples {
				pw.JobReadyTimes = pw.JobReadyTimes[len(pw.JobReadyTimes)-readySamples:]
			}
		}
	}
}

func (p *poolRun) createdOf(name string) (time.Time, bool) {
	for _, r := range p.state.Runners {
		if r.Name == name {
			return r.Created, !r.Adopted && !r.RegistrationOnly && !r.Created.IsZero()
		}
	}
	for _, r := range p.state.Warm.Ended {
		if r.Name == name {
			return r.Created, true
		}
	}
	return time.Time{}, false
}

// readyTime is the pool's time to ready: the ReadyPercentile of the job
// starts once there are any, of the registrations before that; and how many
// samples it is from.
func (s *PoolState) readyTime() (time.Duration, int) {
	if n := len(s.Warm.JobReadyTimes); n > 0 {
		return ReadyTimePercentile(s.Warm.JobReadyTimes), n
	}
	return ReadyTimePercentile(s.Warm.ReadyTimes), len(s.Warm.ReadyTimes)
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
	ready, samples := s.readyTime()
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
	report := ReadyTimeReport{ReadyTime: ready, Samples: samples}
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
