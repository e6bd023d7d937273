package world

import (
	"fmt"
	"strings"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
)

// The manifests the With* functions annotate must write each resource's metadata as name
// first, without annotations.

// WithIdleRunners gives the HorizontalRunnerAutoscaler named hra in a manifest an
// idle buffer of n runners (v1alpha1.IdleRunnersAnnotation).
func WithIdleRunners(manifest, hra string, n int) string {
	return annotate(manifest, "HorizontalRunnerAutoscaler", hra, v1alpha1.IdleRunnersAnnotation, fmt.Sprint(n))
}

// WithIdleRunnersSetting gives the HorizontalRunnerAutoscaler named hra in a
// manifest the arcflow.dev/idle-runners value setting, such as "auto,max=20".
func WithIdleRunnersSetting(manifest, hra, setting string) string {
	return annotate(manifest, "HorizontalRunnerAutoscaler", hra, v1alpha1.IdleRunnersAnnotation, setting)
}

// WithJITConfig makes the RunnerDeployment named rd in a manifest register its
// runners with JIT configurations (v1alpha1.JITConfigAnnotation).
func WithJITConfig(manifest, rd string) string {
	return annotate(manifest, "RunnerDeployment", rd, v1alpha1.JITConfigAnnotation, "true")
}

func annotate(manifest, kind, name, key, value string) string {
	head := "kind: " + kind + "\nmetadata:\n  name: " + name + "\n"
	return strings.Replace(manifest, head, fmt.Sprintf("%s  annotations:\n    %s: %q\n", head, key, value), 1)
}

// CrashingRunners is a RunnerDeployment of one runner, named name, whose image
// crashes at start while crash is true (sim.CrashAtStartEnv).
func CrashingRunners(name, repository string, crash bool) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  replicas: 1
  template:
    spec:
      repository: %[2]s
      labels: [linux, %[1]s]
      env:
      - name: %[3]s
        value: "%[4]t"
`, name, repository, sim.CrashAtStartEnv, crash)
}

// RepoRunnerDeployment is a RunnerDeployment named name, at 0 replicas until
// its HRA scales it, whose runners serve repository with labels [linux, label].
func RepoRunnerDeployment(name, repository, label string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  replicas: 0
  template:
    spec:
      repository: %[2]s
      labels: [linux, %[3]s]
`, name, repository, label)
}

// WebhookHRA is a HorizontalRunnerAutoscaler named name that scales the
// RunnerDeployment or RunnerSet (kind) of the same name from 0 to maxReplicas on
// workflow_job webhooks, with 30 m reservations and the given scale-down delay.
func WebhookHRA(name, kind string, maxReplicas, scaleDownDelaySeconds int) string {
	targetKind := ""
	if kind == v1alpha1.KindRunnerSet {
		targetKind = "\n    kind: RunnerSet"
	}
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: %[1]s
spec:
  scaleTargetRef:%[2]s
    name: %[1]s
  minReplicas: 0
  maxReplicas: %[3]d
  scaleDownDelaySecondsAfterScaleOut: %[4]d
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`, name, targetKind, maxReplicas, scaleDownDelaySeconds)
}
