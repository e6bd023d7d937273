package workflows

import (
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// DefaultPoolStatusInterval is how often at most a pool writes a change of its
// replica counts alone. Each job changes them about three times (created,
// registered, ended), and each write is an activity: at one job every ten
// seconds a pool would write on every third second. Counts a little late are
// what a status is; ARC's own controllers reconcile once a minute.
const DefaultPoolStatusInterval = 30 * time.Second

// pacedStatusVersion marks pools that write count changes at most once per
// status interval and keep their wake-up timer across waits.
const pacedStatusVersion = "paced-status"

func (p *poolRun) pacedStatus(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, pacedStatusVersion, workflow.DefaultVersion, 1) >= 1
}

// statusInterval is the spec's, or DefaultPoolStatusInterval.
func (s *PoolSpec) statusInterval() time.Duration {
	if s.StatusInterval > 0 {
		return s.StatusInterval
	}
	return DefaultPoolStatusInterval
}

// writeStatus writes the pool's status and events when they changed. Changes
// an operator acts on (failures, runners taken over, events other than
// scaling) go out at once; counts and scaling events wait until the interval
// since the last write has passed.
func (p *poolRun) writeStatus(ctx workflow.Context, plan PoolPlan) {
	s := &p.state
	status := p.currentStatus(ctx)
	if status == s.Status && len(p.events) == 0 {
		p.statusDue = time.Time{}
		return
	}
	if p.pacedStatus(ctx) && countsOnly(status, s.Status, p.events) && !s.Deleting {
		due := s.StatusWrittenAt.Add(s.Spec.statusInterval())
		if workflow.Now(ctx).Before(due) {
			p.statusDue = due
			return
		}
	}
	in := calls.PoolStatusInput{Namespace: s.Spec.Namespace, Kind: s.Spec.Kind, Name: s.Spec.Name, Status: status, Events: p.events}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.UpdatePoolStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("cannot write pool status", "pool", s.Spec.Name, "error", err)
		return
	}
	s.Status, p.events = status, nil
	s.StatusWrittenAt, p.statusDue = workflow.Now(ctx), time.Time{}
}

func (p *poolRun) currentStatus(ctx workflow.Context) PoolStatus {
	s := &p.state
	status := PoolStatus{Desired: s.Desired(), RunnerFailures: s.Failures}
	status.VolumesInUse, status.VolumesFree = s.volumeCounts()
	if s.LastFailure != "" {
		status.FailingRunners, status.LastRunnerFailure = s.TimeoutStreak, s.LastFailure
	}
	for _, r := range s.Runners {
		if r.Stopping || r.Finishing || r.RegistrationOnly {
			continue
		}
		status.Replicas++
		if r.TemplateHash == s.Spec.TemplateHash {
			status.Updated++
		}
		if r.Registered {
			status.Ready++
			status.Available++
		}
	}
	status = p.withWarm(workflow.Now(ctx), status)
	status.TakenOver = p.takenOverStatus(ctx)
	status.ScaleSetID = s.ScaleSetID
	return status
}

// countsOnly says that next differs from written in its replica counts alone,
// and that the events are scaling events.
func countsOnly(next, written PoolStatus, events []string) bool {
	next.Desired, next.Replicas, next.Updated, next.Ready, next.Available =
		written.Desired, written.Replicas, written.Updated, written.Ready, written.Available
	return next == written && !slices.ContainsFunc(events, func(e string) bool {
		return !strings.HasPrefix(e, "ScalingUp:") && !strings.HasPrefix(e, "ScalingDown:")
	})
}
