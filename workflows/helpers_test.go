package workflows

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	corev1 "k8s.io/api/core/v1"
)

func converterFor() converter.DataConverter { return converter.GetDefaultDataConverter() }

func corePhase(p string) corev1.PodPhase { return corev1.PodPhase(p) }

func startOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id}
}
