package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
)

// Typed nil pointers name the activities the tests mock (OnActivity) by their
// methods, so a mock of an activity that does not exist fails to compile.
var (
	kube          *activities.Kubernetes
	gh            *activities.GitHub
	temporalCalls *activities.Workflows
)

func converterFor() converter.DataConverter { return converter.GetDefaultDataConverter() }

func corePhase(p string) corev1.PodPhase { return corev1.PodPhase(p) }

func startOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id}
}

// continuedWith is the input a workflow that continued as new passed to its next
// run; it fails t when the workflow ended otherwise.
func continuedWith[T any](t *testing.T, env *testsuite.TestWorkflowEnvironment) T {
	t.Helper()
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "continued as new; got %v", err)
	var next T
	require.NoError(t, converterFor().FromPayloads(can.Input, &next))
	return next
}
