package v1alpha1

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestRunnerDeploymentValidate(t *testing.T) {
	valid := RunnerConfig{Repository: "octo/repo"}
	for _, tc := range []struct {
		name    string
		config  RunnerConfig
		replica *int
		wantErr string
	}{
		{name: "repository", config: valid},
		{name: "organization", config: RunnerConfig{Organization: "octo"}},
		{name: "enterprise", config: RunnerConfig{Enterprise: "ent"}},
		{name: "no scope", config: RunnerConfig{}, wantErr: "spec.template.spec: Required value: exactly one of enterprise, organization and repository must be set"},
		{name: "two scopes", config: RunnerConfig{Organization: "octo", Repository: "octo/repo"}, wantErr: "exactly one of"},
		{name: "repository without owner", config: RunnerConfig{Repository: "repo"}, wantErr: `spec.template.spec.repository: Invalid value: "repo": must be owner/name`},
		{name: "organization with slash", config: RunnerConfig{Organization: "a/b"}, wantErr: "spec.template.spec.organization"},
		{name: "unknown container mode", config: RunnerConfig{Repository: "o/r", ContainerMode: "podman"}, wantErr: `spec.template.spec.containerMode: Unsupported value: "podman"`},
		{name: "kubernetes mode needs a work volume", config: RunnerConfig{Repository: "o/r", ContainerMode: "kubernetes"}, wantErr: "workVolumeClaimTemplate: Required value"},
		{name: "negative replicas", config: valid, replica: ptr.To(-1), wantErr: "spec.replicas: Invalid value: -1: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := &RunnerDeployment{Spec: RunnerDeploymentSpec{Replicas: tc.replica, Template: RunnerTemplate{Spec: RunnerSpec{RunnerConfig: tc.config}}}}
			err := rd.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestHorizontalRunnerAutoscalerValidate(t *testing.T) {
	base := func() HorizontalRunnerAutoscalerSpec {
		return HorizontalRunnerAutoscalerSpec{ScaleTargetRef: ScaleTargetRef{Name: "rd"}, MinReplicas: ptr.To(0), MaxReplicas: ptr.To(5)}
	}
	start := metav1.NewTime(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name    string
		mutate  func(*HorizontalRunnerAutoscalerSpec)
		wantErr string
	}{
		{name: "valid", mutate: func(*HorizontalRunnerAutoscalerSpec) {}},
		{name: "missing target", mutate: func(s *HorizontalRunnerAutoscalerSpec) { s.ScaleTargetRef.Name = "" }, wantErr: "spec.scaleTargetRef.name: Required value"},
		{name: "unknown kind", mutate: func(s *HorizontalRunnerAutoscalerSpec) { s.ScaleTargetRef.Kind = "Deployment" }, wantErr: `spec.scaleTargetRef.kind: Unsupported value: "Deployment"`},
		{name: "missing min", mutate: func(s *HorizontalRunnerAutoscalerSpec) { s.MinReplicas = nil }, wantErr: "spec.minReplicas: Required value"},
		{name: "missing max", mutate: func(s *HorizontalRunnerAutoscalerSpec) { s.MaxReplicas = nil }, wantErr: "spec.maxReplicas: Required value"},
		{name: "min above max", mutate: func(s *HorizontalRunnerAutoscalerSpec) { s.MinReplicas = ptr.To(6) }, wantErr: "must not be greater than maxReplicas"},
		{name: "three metrics", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.Metrics = []MetricSpec{{Type: MetricPercentageRunnersBusy}, {Type: MetricPercentageRunnersBusy}, {Type: MetricPercentageRunnersBusy}}
		}, wantErr: "spec.metrics: Too many"},
		{name: "metrics in the wrong order", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.Metrics = []MetricSpec{{Type: MetricTotalNumberOfQueuedAndInProgressWorkflowRuns}, {Type: MetricPercentageRunnersBusy}}
		}, wantErr: "PercentageRunnersBusy followed by"},
		{name: "threshold not a number", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.Metrics = []MetricSpec{{Type: MetricPercentageRunnersBusy, ScaleUpThreshold: "high"}}
		}, wantErr: `spec.metrics[0].scaleUpThreshold: Invalid value: "high"`},
		{name: "factor and adjustment", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.Metrics = []MetricSpec{{Type: MetricPercentageRunnersBusy, ScaleUpFactor: "2", ScaleUpAdjustment: 1}}
		}, wantErr: "scaleUpFactor and scaleUpAdjustment cannot both be set"},
		{name: "override ends before it starts", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.ScheduledOverrides = []ScheduledOverride{{StartTime: start, EndTime: start}}
		}, wantErr: "spec.scheduledOverrides[0].endTime"},
		{name: "daily override longer than a day", mutate: func(s *HorizontalRunnerAutoscalerSpec) {
			s.ScheduledOverrides = []ScheduledOverride{{StartTime: start, EndTime: metav1.NewTime(start.Add(25 * time.Hour)), RecurrenceRule: RecurrenceRule{Frequency: "Daily"}}}
		}, wantErr: "longer than one Daily period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hra := &HorizontalRunnerAutoscaler{Spec: base()}
			tc.mutate(&hra.Spec)
			err := hra.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestDefaultsMatchARC(t *testing.T) {
	var c RunnerConfig
	require.True(t, c.IsEphemeral(), "nil ephemeral means true")
	require.True(t, c.IsDockerEnabled())
	require.True(t, c.HasDockerSidecar())
	require.Equal(t, "/runner/_work", c.WorkDirOrDefault())
	c.DockerdWithinRunnerContainer = ptr.To(true)
	require.False(t, c.HasDockerSidecar(), "dind in the runner container needs no sidecar")

	var rd RunnerDeploymentSpec
	require.Equal(t, 1, rd.DesiredReplicas())

	var hra HorizontalRunnerAutoscalerSpec
	require.Equal(t, KindRunnerDeployment, hra.TargetKind())
	require.Equal(t, 1, hra.MinReplicasOrDefault(), "nil minReplicas means 1")
	hra.MinReplicas = ptr.To(-3)
	require.Equal(t, 1, hra.MinReplicasOrDefault(), "negative minReplicas means 1")
	require.Equal(t, 10*time.Minute, hra.ScaleDownDelay(DefaultScaleDownDelay))
	hra.ScaleDownDelaySecondsAfterScaleUp = ptr.To(30)
	require.Equal(t, 30*time.Second, hra.ScaleDownDelay(DefaultScaleDownDelay))
	require.Equal(t, 10*time.Minute, ScaleUpTrigger{}.DurationOrDefault())

	_, ok := hra.WorkflowJobTrigger()
	require.False(t, ok)
	hra.ScaleUpTriggers = []ScaleUpTrigger{{GitHubEvent: &GitHubEventScaleUpTriggerSpec{WorkflowJob: &WorkflowJobSpec{}}}}
	_, ok = hra.WorkflowJobTrigger()
	require.True(t, ok)
}

func TestUnsupportedFieldsAreNamed(t *testing.T) {
	hra := &HorizontalRunnerAutoscaler{Spec: HorizontalRunnerAutoscalerSpec{
		ScaleUpTriggers: []ScaleUpTrigger{{GitHubEvent: &GitHubEventScaleUpTriggerSpec{CheckRun: &CheckRunSpec{}}}},
	}}
	require.Equal(t, []string{"spec.scaleUpTriggers[].githubEvent.checkRun (no effect since ARC v0.27)"}, hra.UnsupportedFields())
	hra.Spec.ScaleUpTriggers = []ScaleUpTrigger{{GitHubEvent: &GitHubEventScaleUpTriggerSpec{WorkflowJob: &WorkflowJobSpec{}}, Amount: 1}}
	require.Empty(t, hra.UnsupportedFields())
}
