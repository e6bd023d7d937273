package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

// UpdateHRAStatus writes a HorizontalRunnerAutoscaler's status subresource.
func (k *Kubernetes) UpdateHRAStatus(ctx context.Context, in HRAStatusInput) error {
	status := map[string]any{"desiredReplicas": in.DesiredReplicas, "scheduledOverridesSummary": in.ScheduledOverridesSummary}
	if in.LastSuccessfulScaleOutTime != nil {
		status["lastSuccessfulScaleOutTime"] = metav1.NewTime(*in.LastSuccessfulScaleOutTime)
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("status of hra %s/%s: %w", in.Namespace, in.Name, err)
	}
	_, err = k.Dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(in.Namespace).
		Patch(ctx, in.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of hra %s/%s: %w", in.Namespace, in.Name, err)
	}
	return nil
}

// JobLister is the part of the GitHub client the autoscaler activities use.
type JobLister interface {
	ListOpenJobs(ctx context.Context, repository string) ([]github.Job, error)
	OpenRuns(ctx context.Context, repository string) (queued, inProgress []github.Run, err error)
	RunJobs(ctx context.Context, repository string, runID int64) ([]github.Job, error)
}

// ListQueuedJobs lists the open jobs of repositories that the target's labels fit.
func (g *GitHub) ListQueuedJobs(ctx context.Context, in QueuedJobsInput) (QueuedJobsOutput, error) {
	var out QueuedJobsOutput
	lister, err := g.jobs(ctx, in.Credentials)
	if err != nil {
		return out, err
	}
	if in.ByRun {
		return reconcileByRun(ctx, lister, in, &g.knownRuns)
	}
	for _, repo := range in.Repositories {
		jobs, err := lister.ListOpenJobs(ctx, repo)
		if err != nil {
			return out, githubError(err)
		}
		for _, j := range jobs {
			if !github.LabelsFit(j.Labels, in.Labels, true) {
				continue
			}
			switch j.Status {
			case "queued":
				out.Queued = append(out.Queued, j.ID)
			case "in_progress":
				out.InProgress = append(out.InProgress, j.ID)
			}
		}
	}
	return out, nil
}

// SuggestReplicas computes ARC's pull metrics (reference §3.2-3.4): the first
// metric's suggestion when it is above zero, else the second's; nil when none.
func (g *GitHub) SuggestReplicas(ctx context.Context, in MetricsInput) (*int, error) {
	for _, m := range in.Metrics {
		var n int
		var err error
		switch m.Type {
		case v1alpha1.MetricTotalNumberOfQueuedAndInProgressWorkflowRuns:
			n, err = g.queuedAndInProgress(ctx, in)
		case v1alpha1.MetricPercentageRunnersBusy:
			n, err = g.percentageBusy(ctx, in, m)
		default:
			return nil, fmt.Errorf("unknown metric %q", m.Type)
		}
		if err != nil {
			return nil, err
		}
		if n > 0 || len(in.Metrics) == 1 {
			return &n, nil
		}
	}
	return nil, nil
}

func (g *GitHub) queuedAndInProgress(ctx context.Context, in MetricsInput) (int, error) {
	out, err := g.ListQueuedJobs(ctx, QueuedJobsInput{Repositories: in.Repositories, Labels: in.Labels, Credentials: in.Scope.Credentials})
	return len(out.Queued) + len(out.InProgress), err
}

func (g *GitHub) percentageBusy(ctx context.Context, in MetricsInput, m v1alpha1.MetricSpec) (int, error) {
	registry, err := g.registry(ctx, in.Scope)
	if err != nil {
		return 0, err
	}
	runners, err := registry.SharedRunners(github.WithPurpose(ctx, "metrics"), in.Scope)
	if err != nil {
		return 0, githubError(err)
	}
	busy := 0
	for _, r := range runners {
		if strings.HasPrefix(r.Name, in.Pool+"-") && r.Busy {
			busy++
		}
	}
	before := in.CurrentReplicas
	if before == 0 {
		return 0, nil // ARC's NaN: PercentageRunnersBusy alone cannot scale from zero
	}
	parse := func(s string, def float64) float64 {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return def
	}
	fraction := float64(busy) / float64(before)
	switch {
	case fraction >= parse(m.ScaleUpThreshold, v1alpha1.DefaultScaleUpThreshold):
		if m.ScaleUpAdjustment > 0 {
			return before + m.ScaleUpAdjustment, nil
		}
		return int(math.Ceil(float64(before) * parse(m.ScaleUpFactor, v1alpha1.DefaultScaleUpFactor))), nil
	case fraction < parse(m.ScaleDownThreshold, v1alpha1.DefaultScaleDownThreshold):
		if m.ScaleDownAdjustment > 0 {
			return before - m.ScaleDownAdjustment, nil
		}
		return int(float64(before) * parse(m.ScaleDownFactor, v1alpha1.DefaultScaleDownFactor)), nil
	}
	return before, nil
}
