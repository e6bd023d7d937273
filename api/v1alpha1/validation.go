package v1alpha1

import (
	"regexp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	ownerNamePattern = regexp.MustCompile(`^[^/]+$`)
	repoNamePattern  = regexp.MustCompile(`^[^/]+/[^/]+$`)
)

// Validate checks a RunnerDeployment beyond what the CRD schema can express. The
// error lists every problem with its field path.
func (rd *RunnerDeployment) Validate() error {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if rd.Spec.Replicas != nil && *rd.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *rd.Spec.Replicas, "must not be negative"))
	}
	errs = append(errs, validateRunnerConfig(&rd.Spec.Template.Spec.RunnerConfig, spec.Child("template", "spec"))...)
	if rd.Spec.Template.Spec.ContainerMode == "kubernetes" && rd.Spec.Template.Spec.WorkVolumeClaimTemplate == nil {
		errs = append(errs, field.Required(spec.Child("template", "spec", "workVolumeClaimTemplate"), "containerMode kubernetes needs a work volume claim template"))
	}
	return errs.ToAggregate()
}

// Validate checks a RunnerSet beyond what the CRD schema can express.
func (rs *RunnerSet) Validate() error {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if rs.Spec.Replicas != nil && *rs.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), *rs.Spec.Replicas, "must not be negative"))
	}
	errs = append(errs, validateRunnerConfig(&rs.Spec.RunnerConfig, spec)...)
	if len(rs.Spec.Template.Spec.Containers) == 0 {
		errs = append(errs, field.Required(spec.Child("template", "spec", "containers"), "a RunnerSet's pod template needs a container named runner"))
	}
	return errs.ToAggregate()
}

func validateRunnerConfig(c *RunnerConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	scopes := 0
	if c.Enterprise != "" {
		scopes++
		if !ownerNamePattern.MatchString(c.Enterprise) {
			errs = append(errs, field.Invalid(path.Child("enterprise"), c.Enterprise, "must be an enterprise slug without '/'"))
		}
	}
	if c.Organization != "" {
		scopes++
		if !ownerNamePattern.MatchString(c.Organization) {
			errs = append(errs, field.Invalid(path.Child("organization"), c.Organization, "must be an organization name without '/'"))
		}
	}
	if c.Repository != "" {
		scopes++
		if !repoNamePattern.MatchString(c.Repository) {
			errs = append(errs, field.Invalid(path.Child("repository"), c.Repository, "must be owner/name"))
		}
	}
	if scopes != 1 {
		errs = append(errs, field.Required(path, "exactly one of enterprise, organization and repository must be set"))
	}
	if c.ContainerMode != "" && c.ContainerMode != "kubernetes" {
		errs = append(errs, field.NotSupported(path.Child("containerMode"), c.ContainerMode, []string{"", "kubernetes"}))
	}
	if c.IsDockerdWithinRunnerContainer() && !c.IsDockerEnabled() {
		errs = append(errs, field.Invalid(path.Child("dockerdWithinRunnerContainer"), true, "needs dockerEnabled"))
	}
	return errs
}

// Validate checks an autoscaler: the fields ARC needs at run time (minReplicas and
// maxReplicas), metric combinations and schedule windows.
func (hra *HorizontalRunnerAutoscaler) Validate() error {
	var errs field.ErrorList
	s := &hra.Spec
	spec := field.NewPath("spec")
	if s.ScaleTargetRef.Name == "" {
		errs = append(errs, field.Required(spec.Child("scaleTargetRef", "name"), "names the RunnerDeployment or RunnerSet to scale"))
	}
	if k := s.TargetKind(); k != KindRunnerDeployment && k != KindRunnerSet {
		errs = append(errs, field.NotSupported(spec.Child("scaleTargetRef", "kind"), s.ScaleTargetRef.Kind, []string{KindRunnerDeployment, KindRunnerSet}))
	}
	if s.MinReplicas == nil {
		errs = append(errs, field.Required(spec.Child("minReplicas"), "the autoscaler cannot compute replicas without it"))
	}
	if s.MaxReplicas == nil {
		errs = append(errs, field.Required(spec.Child("maxReplicas"), "the autoscaler cannot compute replicas without it"))
	}
	if s.MinReplicas != nil && s.MaxReplicas != nil && *s.MinReplicas > *s.MaxReplicas {
		errs = append(errs, field.Invalid(spec.Child("minReplicas"), *s.MinReplicas, "must not be greater than maxReplicas"))
	}
	errs = append(errs, validateMetrics(s.Metrics, spec.Child("metrics"))...)
	for i, o := range s.ScheduledOverrides {
		errs = append(errs, validateScheduledOverride(o, spec.Child("scheduledOverrides").Index(i))...)
	}
	return errs.ToAggregate()
}

func validateMetrics(metrics []MetricSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(metrics) > 2 {
		errs = append(errs, field.TooMany(path, len(metrics), 2))
	}
	if len(metrics) == 2 && (metrics[0].Type != MetricPercentageRunnersBusy || metrics[1].Type != MetricTotalNumberOfQueuedAndInProgressWorkflowRuns) {
		errs = append(errs, field.Invalid(path, len(metrics), "two metrics must be PercentageRunnersBusy followed by TotalNumberOfQueuedAndInProgressWorkflowRuns"))
	}
	for i, m := range metrics {
		p := path.Index(i)
		switch m.Type {
		case MetricTotalNumberOfQueuedAndInProgressWorkflowRuns, MetricPercentageRunnersBusy:
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), m.Type, []string{MetricTotalNumberOfQueuedAndInProgressWorkflowRuns, MetricPercentageRunnersBusy}))
		}
		for name, v := range map[string]string{
			"scaleUpThreshold": m.ScaleUpThreshold, "scaleDownThreshold": m.ScaleDownThreshold,
			"scaleUpFactor": m.ScaleUpFactor, "scaleDownFactor": m.ScaleDownFactor,
		} {
			if v == "" {
				continue
			}
			if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
				errs = append(errs, field.Invalid(p.Child(name), v, "must be a non-negative decimal number"))
			}
		}
		if m.ScaleUpFactor != "" && m.ScaleUpAdjustment != 0 {
			errs = append(errs, field.Forbidden(p.Child("scaleUpAdjustment"), "scaleUpFactor and scaleUpAdjustment cannot both be set"))
		}
		if m.ScaleDownFactor != "" && m.ScaleDownAdjustment != 0 {
			errs = append(errs, field.Forbidden(p.Child("scaleDownAdjustment"), "scaleDownFactor and scaleDownAdjustment cannot both be set"))
		}
		if m.ScaleUpAdjustment < 0 {
			errs = append(errs, field.Invalid(p.Child("scaleUpAdjustment"), m.ScaleUpAdjustment, "must not be negative"))
		}
		if m.ScaleDownAdjustment < 0 {
			errs = append(errs, field.Invalid(p.Child("scaleDownAdjustment"), m.ScaleDownAdjustment, "must not be negative"))
		}
	}
	return errs
}

// FrequencyPeriod is the length of one recurrence period, or 0 for a one-off.
func FrequencyPeriod(frequency string) time.Duration {
	switch frequency {
	case "Daily":
		return 24 * time.Hour
	case "Weekly":
		return 7 * 24 * time.Hour
	case "Monthly":
		return 31 * 24 * time.Hour
	case "Yearly":
		return 366 * 24 * time.Hour
	}
	return 0
}

func validateScheduledOverride(o ScheduledOverride, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !o.EndTime.After(o.StartTime.Time) {
		errs = append(errs, field.Invalid(path.Child("endTime"), o.EndTime.Format(time.RFC3339), "must be after startTime"))
	}
	if period := FrequencyPeriod(o.RecurrenceRule.Frequency); period > 0 && o.EndTime.Sub(o.StartTime.Time) > period {
		errs = append(errs, field.Invalid(path.Child("endTime"), o.EndTime.Format(time.RFC3339),
			"the window from startTime to endTime must not be longer than one "+o.RecurrenceRule.Frequency+" period"))
	}
	return errs
}
