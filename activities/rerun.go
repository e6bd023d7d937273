package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

// JobRerunner reads a workflow run and re-runs one of its jobs.
type JobRerunner interface {
	WorkflowRun(ctx context.Context, repository string, runID int64) (github.RunState, error)
	RerunJob(ctx context.Context, repository string, jobID int64) error
	FindRunnerJob(ctx context.Context, repository string, runID int64, runnerName string, queuedAt time.Time) (github.RunnerJob, bool, error)
}

// RerunMaxAge is GitHub's limit: a run can be re-run up to 30 days after it
// was created.
const RerunMaxAge = 30 * 24 * time.Hour

// rerunClient is the client of the credentials named by ref (the default
// ones when empty) for the re-run calls; what names the call in its error.
func (g *GitHub) rerunClient(ctx context.Context, ref, what string) (JobRerunner, error) {
	client, err := clientFor(ctx, g.Credentials, g.Reruns, ref)
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("%s: no GitHub client for re-runs", what)
	}
	return client, nil
}

// RerunLostJob re-runs a job once GitHub allows it. It is idempotent: it
// reads the run first, and a run already past the attempt that lost the job
// was re-run (by an earlier try of this call whose answer was lost, or by a
// person), so it is not re-run again. Two calls when the run has completed,
// one while it has not.
func (g *GitHub) RerunLostJob(ctx context.Context, in RerunLostJobInput) (RerunLostJobOutput, error) {
	client, err := g.rerunClient(ctx, in.Credentials, "re-run lost job")
	if err != nil {
		return RerunLostJobOutput{}, err
	}
	run, err := client.WorkflowRun(ctx, in.Repository, in.RunID)
	if errors.Is(err, github.ErrNotFound) {
		return RerunLostJobOutput{Outcome: RerunRefused, Message: "the workflow run is gone"}, nil
	}
	if err != nil {
		return RerunLostJobOutput{}, fmt.Errorf("re-run lost job %d: %w", in.JobID, err)
	}
	switch {
	case run.Attempt > in.RunAttempt:
		return RerunLostJobOutput{Outcome: RerunAlready}, nil
	case !run.Completed():
		return RerunLostJobOutput{Outcome: RerunWaiting}, nil
	case !run.CreatedAt.IsZero() && time.Since(run.CreatedAt) > RerunMaxAge:
		return RerunLostJobOutput{Outcome: RerunRefused, Message: "the workflow run is over 30 days old"}, nil
	}
	err = client.RerunJob(ctx, in.Repository, in.JobID)
	var refused *github.RerunRefusedError
	switch {
	case err == nil:
		return RerunLostJobOutput{Outcome: RerunDone}, nil
	case errors.As(err, &refused) && refused.Running:
		return RerunLostJobOutput{Outcome: RerunWaiting}, nil
	case errors.As(err, &refused) && refused.NoPermission:
		return RerunLostJobOutput{Outcome: RerunNoPermission, Message: refused.Message}, nil
	case errors.As(err, &refused):
		return RerunLostJobOutput{Outcome: RerunRefused, Message: refused.Message}, nil
	}
	return RerunLostJobOutput{}, fmt.Errorf("re-run lost job %d: %w", in.JobID, err)
}

// FindRunnerJob finds the job a runner ran, for a re-run of a job that a
// runner scale set reported by its own id (github.Client.FindRunnerJob). It
// only reads, so a retry is harmless.
func (g *GitHub) FindRunnerJob(ctx context.Context, in FindRunnerJobInput) (FindRunnerJobOutput, error) {
	client, err := g.rerunClient(ctx, in.Credentials, "find runner job")
	if err != nil {
		return FindRunnerJobOutput{}, err
	}
	job, found, err := client.FindRunnerJob(ctx, in.Repository, in.RunID, in.Runner, in.QueuedAt)
	if err != nil {
		return FindRunnerJobOutput{}, fmt.Errorf("find the job of runner %s in %s: %w", in.Runner, in.Repository, err)
	}
	if !found {
		return FindRunnerJobOutput{}, nil
	}
	return FindRunnerJobOutput{Found: true, RunID: job.RunID, JobID: job.JobID, JobName: job.Name, RunAttempt: job.RunAttempt}, nil
}

// LostJobMetrics counts jobs lost to infrastructure by cause and outcome.
type LostJobMetrics struct {
	total *prometheus.CounterVec
}

// NewLostJobMetrics creates arcflow_lost_jobs_total and registers it with reg
// (nil: not registered).
func NewLostJobMetrics(reg prometheus.Registerer) *LostJobMetrics {
	m := &LostJobMetrics{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "arcflow_lost_jobs_total",
		Help: "Jobs whose runner infrastructure took away while they ran, by cause (node-lost, evicted, preempted, oom-killed, runner-died, pod-deleted) and outcome (rerun, already-rerun, limit-reached, refused, no-permission, disabled).",
	}, []string{"cause", "outcome"})}
	if reg != nil {
		reg.MustRegister(m.total)
	}
	return m
}

// ReportLostJob counts a lost job's outcome and records it as an event on its
// pool's resource: Normal JobRerun for a re-run, Warning JobLost otherwise;
// a refusal for lack of permission (and the next re-run) sets the
// RerunLostJobs condition. An event that cannot be written is logged, not
// retried. A retry of the whole call counts the outcome again: the metric is
// at least once.
func (k *Kubernetes) ReportLostJob(ctx context.Context, in LostJobReport) error {
	k.LostJobs.count(in.Cause, in.Outcome)
	obj, err := k.Dynamic.Resource(PoolResource(in.Pool.Kind)).Namespace(in.Pool.Namespace).Get(ctx, in.Pool.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report lost job on %s %s/%s: %w", in.Pool.Kind, in.Pool.Namespace, in.Pool.Name, err)
	}
	eventType, reason := corev1.EventTypeWarning, "JobLost"
	if in.Outcome == RerunDone || in.Outcome == RerunAlready {
		eventType, reason = corev1.EventTypeNormal, "JobRerun"
	}
	on := corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: in.Pool.Kind, Name: in.Pool.Name,
		Namespace: in.Pool.Namespace, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
	if err := RecordEvent(ctx, k.Client, on, eventType, reason, in.Message); err != nil {
		slog.Warn("cannot record a lost job's event", "pool", in.Pool.Namespace+"/"+in.Pool.Name, "error", err)
	}
	return k.setRerunCondition(ctx, obj, in)
}

func (m *LostJobMetrics) count(cause, outcome string) {
	if m != nil {
		m.total.WithLabelValues(cause, outcome).Inc()
	}
}
