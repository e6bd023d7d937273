package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/arcflow/arcflow/activities"
)

// A start that names its runner's pod creates the pod first and hands the
// workflow the creation's output; a creation that fails leaves the input as
// it was, for the workflow to create the pod itself.
func TestAStartCreatesItsRunnerFirst(t *testing.T) {
	temporal := mocks.NewClient(t)
	var mu sync.Mutex
	inputs := map[string]json.RawMessage{}
	temporal.On("ExecuteWorkflow", mock.Anything, mock.Anything, "RunnerWorkflow", mock.Anything).Run(func(args mock.Arguments) {
		mu.Lock()
		defer mu.Unlock()
		inputs[args.Get(1).(client.StartWorkflowOptions).ID] = args.Get(3).(json.RawMessage)
	}).Return(nil, nil).Maybe()
	var created []string
	w := &activities.Workflows{Client: temporal, CreateRunner: func(_ context.Context, pod activities.RunnerPodInput) (activities.RunnerPodOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		created = append(created, pod.Name)
		if pod.Name == "app-bad" {
			return activities.RunnerPodOutput{}, errors.New("admission webhook refused the pod")
		}
		return activities.RunnerPodOutput{UID: "uid-" + pod.Name, Created: true, PoolToken: true}, nil
	}}
	start := func(name string) activities.WorkflowStart {
		return activities.WorkflowStart{ID: "runner/ci/" + name, Type: "RunnerWorkflow", TaskQueue: "arcflow",
			Input: json.RawMessage(`{"Ephemeral":true}`), RunnerPod: &activities.RunnerPodInput{Name: name, Namespace: "ci"}}
	}
	plain := activities.WorkflowStart{ID: "runner/ci/app-plain", Type: "RunnerWorkflow", TaskQueue: "arcflow", Input: json.RawMessage(`{"Ephemeral":true}`)}
	require.NoError(t, w.StartWorkflows(context.Background(), []activities.WorkflowStart{start("app-ok")}))
	require.NoError(t, w.StartWorkflows(context.Background(), []activities.WorkflowStart{start("app-bad"), plain}))

	w.CanCreateRunners = func(context.Context) bool { return false } // an older replica still runs
	require.NoError(t, w.StartWorkflows(context.Background(), []activities.WorkflowStart{start("app-later")}))

	require.Equal(t, []string{"app-ok", "app-bad"}, created, "only starts that name a pod create one, while every replica can")
	require.JSONEq(t, `{"Ephemeral":true}`, string(inputs["runner/ci/app-later"]))
	require.JSONEq(t, `{"Ephemeral":true,"Created":{"UID":"uid-app-ok","Created":true,"PoolToken":true}}`, string(inputs["runner/ci/app-ok"]))
	require.JSONEq(t, `{"Ephemeral":true}`, string(inputs["runner/ci/app-bad"]), "the workflow creates it")
	require.JSONEq(t, `{"Ephemeral":true}`, string(inputs["runner/ci/app-plain"]))
}
