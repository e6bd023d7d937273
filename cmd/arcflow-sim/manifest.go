package main

import (
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/simworld"
)

// autoscaledPool is the RunnerDeployment and HorizontalRunnerAutoscaler that
// bench and chaos scale: both named name, runners labelled [linux, name] for one
// repository, from 0 up to maxReplicas on workflow_job webhooks, with a 30 s
// scale-down delay.
func autoscaledPool(name, repository string, maxReplicas int) string {
	return simworld.RepoRunnerDeployment(name, repository, name) + "---\n" + simworld.WebhookHRA(name, v1alpha1.KindRunnerDeployment, maxReplicas, 30)
}
