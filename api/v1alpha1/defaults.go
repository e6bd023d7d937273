package v1alpha1

import "time"

// Defaults ARC applies when a field is left out.
const (
	DefaultWorkDir                  = "/runner/_work"
	DefaultReplicas                 = 1
	DefaultScaleDownDelay           = 10 * time.Minute
	DefaultScaleUpTriggerDuration   = 10 * time.Minute
	DefaultScaleUpThreshold         = 0.8
	DefaultScaleDownThreshold       = 0.3
	DefaultScaleUpFactor            = 1.3
	DefaultScaleDownFactor          = 0.7
	DefaultDockerVarRunVolumeLimit  = "1M"
	DefaultRunnerGracefulStopPeriod = 15 * time.Second
)

// IsEphemeral reports whether runners take one job and exit; nil means true.
func (c *RunnerConfig) IsEphemeral() bool {
	return c.Ephemeral == nil || *c.Ephemeral
}

// IsDockerdWithinRunnerContainer reports dind-in-runner mode; nil means false.
func (c *RunnerConfig) IsDockerdWithinRunnerContainer() bool {
	return c.DockerdWithinRunnerContainer != nil && *c.DockerdWithinRunnerContainer
}

// IsDockerEnabled reports whether docker is available to jobs; nil means true.
func (c *RunnerConfig) IsDockerEnabled() bool {
	return c.DockerEnabled == nil || *c.DockerEnabled
}

// HasDockerSidecar reports whether the pod gets a docker:dind sidecar container.
func (c *RunnerConfig) HasDockerSidecar() bool {
	return c.IsDockerEnabled() && !c.IsDockerdWithinRunnerContainer() && c.ContainerMode != "kubernetes"
}

// WorkDirOrDefault is the runner's work directory.
func (c *RunnerConfig) WorkDirOrDefault() string {
	if c.WorkDir == "" {
		return DefaultWorkDir
	}
	return c.WorkDir
}

// DesiredReplicas is spec.replicas, or 1 when unset.
func (s *RunnerDeploymentSpec) DesiredReplicas() int {
	if s.Replicas == nil {
		return DefaultReplicas
	}
	return *s.Replicas
}

// DesiredReplicas is spec.replicas, or 1 when unset.
func (s *RunnerSetSpec) DesiredReplicas() int {
	if s.Replicas == nil {
		return DefaultReplicas
	}
	return int(*s.Replicas)
}

// TargetKind is scaleTargetRef.kind with the empty default resolved.
func (s *HorizontalRunnerAutoscalerSpec) TargetKind() string {
	if s.ScaleTargetRef.Kind == "" {
		return KindRunnerDeployment
	}
	return s.ScaleTargetRef.Kind
}

// MinReplicasOrDefault is minReplicas; nil or negative means 1, as in ARC.
func (s *HorizontalRunnerAutoscalerSpec) MinReplicasOrDefault() int {
	if s.MinReplicas == nil || *s.MinReplicas < 0 {
		return DefaultReplicas
	}
	return *s.MinReplicas
}

// ScaleDownDelay is the anti-flap window after a scale-out; def applies when unset
// (ARC's --default-scale-down-delay).
func (s *HorizontalRunnerAutoscalerSpec) ScaleDownDelay(def time.Duration) time.Duration {
	if s.ScaleDownDelaySecondsAfterScaleUp == nil {
		return def
	}
	return time.Duration(*s.ScaleDownDelaySecondsAfterScaleUp) * time.Second
}

// WorkflowJobTrigger returns the trigger that scales on workflow_job events, if any.
func (s *HorizontalRunnerAutoscalerSpec) WorkflowJobTrigger() (ScaleUpTrigger, bool) {
	for _, t := range s.ScaleUpTriggers {
		if t.GitHubEvent != nil && t.GitHubEvent.WorkflowJob != nil {
			return t, true
		}
	}
	return ScaleUpTrigger{}, false
}

// DurationOrDefault is how long a reservation made by this trigger lives.
func (t ScaleUpTrigger) DurationOrDefault() time.Duration {
	if t.Duration.Duration <= 0 {
		return DefaultScaleUpTriggerDuration
	}
	return t.Duration.Duration
}
