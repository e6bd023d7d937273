package main

import (
	"fmt"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/simworld"
)

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
`, name, repository) + "---\n" + simworld.WebhookHRA(name, v1alpha1.KindRunnerDeployment, maxReplicas, 30)
}
