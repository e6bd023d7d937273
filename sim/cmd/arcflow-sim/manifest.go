package main

import (
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/world"
)

// autoscaledPool is the RunnerDeployment and HorizontalRunnerAutoscaler that
// bench and chaos scale: both named name, runners labelled [linux, name] for one
// repository, from 0 up to maxReplicas on workflow_job webhooks, with a 30 s
// scale-down delay.
func autoscaledPool(name, repository string, maxReplicas int) string {
	return world.RepoRunnerDeployment(name, repository, name) + "---\n" + world.WebhookHRA(name, v1alpha1.KindRunnerDeployment, maxReplicas, 30)
}
