package main

import "fmt"

// autoscaledPool is the RunnerDeployment and HorizontalRunnerAutoscaler that
// bench and chaos scale: both named name, runners labelled [linux, name] for one
// repository, from 0 up to maxReplicas on workflow_job webhooks, with a 30 s
// scale-down delay.
func autoscaledPool(name, repository string, maxReplicas int) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  replicas: 0
  template:
    spec:
      repository: %[2]s
      labels: [linux, %[1]s]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: %[1]s
spec:
  scaleTargetRef:
    name: %[1]s
  minReplicas: 0
  maxReplicas: %[3]d
  scaleDownDelaySecondsAfterScaleOut: 30
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`, name, repository, maxReplicas)
}
