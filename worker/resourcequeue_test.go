package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/temporalerr"
	"github.com/arcflow/arcflow/workflows/contract"
)

// flakyTemporal fails each workflow's signals with the errors queued for it,
// then takes them. It records the signals it took.
type flakyTemporal struct {
	client.Client
	mu    sync.Mutex
	fails map[string][]error
	took  []string // workflow ID and signal name
	// unhealthy makes CheckHealth fail, as a Temporal that is down does.
	unhealthy bool
}

func (f *flakyTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unhealthy {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	return &client.CheckHealthResponse{}, nil
}

// pending is how many failures are still queued for id.
func (f *flakyTemporal) pending(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.fails[id])
}

func (f *flakyTemporal) next(id, signal string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if errs := f.fails[id]; len(errs) > 0 {
		f.fails[id] = errs[1:]
		return errs[0]
	}
	f.took = append(f.took, id+" "+signal)
	return nil
}

func (f *flakyTemporal) SignalWithStartWorkflow(_ context.Context, id, signal string, _ any, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	return nil, f.next(id, signal)
}

func (f *flakyTemporal) SignalWorkflow(_ context.Context, id, _, signal string, _ any) error {
	return f.next(id, signal)
}

func (f *flakyTemporal) signalled(want string) bool { return f.count(want) > 0 }

func (f *flakyTemporal) count(want string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.took {
		if s == want {
			n++
		}
	}
	return n
}

// lastStates are the last of each list of states.
func lastStates(lists ...[]string) []string {
	var out []string
	for _, states := range lists {
		if len(states) > 0 {
			out = append(out, states[len(states)-1])
		}
	}
	return out
}

func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "ci", "generation": int64(1)},
		"spec":     spec,
	}}
}

// A change that Temporal refuses while it is down is kept and sent again with
// backoff until it lands; meanwhile the resource says why (TemporalUnavailable,
// Accepted=Unknown), and a Temporal without arcflow's namespace is named as
// such. A deletion is retried the same way.
func TestResourceChangesWaitOutTemporal(t *testing.T) {
	rd := object(v1alpha1.KindRunnerDeployment, "app", map[string]any{
		"template": map[string]any{"spec": map[string]any{"repository": "octo-org/app"}},
	})
	hra := object(kindHRA, "app", map[string]any{"scaleTargetRef": map[string]any{"name": "app"}, "minReplicas": int64(0), "maxReplicas": int64(3)})
	dyn := fakeResources(rd, hra)
	down := serviceerror.NewUnavailable("connection refused")
	temporal := &flakyTemporal{fails: map[string][]error{
		contract.PoolWorkflowID("ci", v1alpha1.KindRunnerDeployment, "app"): {down, down},
		"hra/ci/app": {serviceerror.NewNamespaceNotFound("arcflow")},
	}}
	// Every Accepted condition written, per resource, in order: read from the
	// writes themselves, so a state that lasts one backoff is not missed by a
	// poll on a loaded machine.
	var mu sync.Mutex
	written := map[string][]string{}
	dyn.PrependReactor("patch", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		var body struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if json.Unmarshal(action.(k8stesting.PatchAction).GetPatch(), &body) == nil {
			for _, c := range body.Status.Conditions {
				if c.Type == "Accepted" {
					mu.Lock()
					states := written[action.GetResource().Resource]
					if len(states) == 0 || states[len(states)-1] != string(c.Status)+"/"+c.Reason {
						written[action.GetResource().Resource] = append(states, string(c.Status)+"/"+c.Reason)
					}
					mu.Unlock()
				}
			}
		}
		return false, nil, nil
	})
	states := func(resource schema.GroupVersionResource) []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(written[resource.Resource])
	}
	ctx := context.Background()
	stop := runWatcher(t, dyn, temporal)

	require.Eventually(t, func() bool {
		return slices.Equal(lastStates(states(v1alpha1.RunnerDeploymentResource), states(v1alpha1.HorizontalRunnerAutoscalerResource)),
			[]string{"True/Accepted", "True/Accepted"})
	}, 10*time.Second, 5*time.Millisecond, "the changes land once Temporal takes them")
	require.Equal(t, []string{"Unknown/" + temporalerr.ReasonUnavailable, "True/Accepted"}, states(v1alpha1.RunnerDeploymentResource),
		"while Temporal is down the pool says so; it is never InvalidSpec")
	require.Equal(t, []string{"False/" + temporalerr.ReasonNotSetUp, "True/Accepted"}, states(v1alpha1.HorizontalRunnerAutoscalerResource),
		"a missing namespace is named on the HRA until it exists")
	require.True(t, temporal.signalled(contract.PoolWorkflowID("ci", v1alpha1.KindRunnerDeployment, "app")+" spec"))
	require.True(t, temporal.signalled("hra/ci/app spec"))

	// An annotation arcflow reads changes no generation, yet is part of the
	// spec the pool gets: it is sent again.
	poolSpec := contract.PoolWorkflowID("ci", v1alpha1.KindRunnerDeployment, "app") + " spec"
	sent := temporal.count(poolSpec)
	current, err := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci").Get(ctx, "app", metav1.GetOptions{})
	require.NoError(t, err)
	current.SetAnnotations(map[string]string{v1alpha1.RegistrationOnlyAnnotation: "true"})
	_, err = dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci").Update(ctx, current, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return temporal.count(poolSpec) > sent }, 10*time.Second, 5*time.Millisecond,
		"an annotation-only change reaches the pool")

	temporal.mu.Lock()
	temporal.fails["hra/ci/app"] = []error{down, down}
	temporal.mu.Unlock()
	require.NoError(t, dyn.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace("ci").Delete(ctx, "app", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { return temporal.signalled("hra/ci/app delete") }, 10*time.Second, 5*time.Millisecond,
		"a deletion made while Temporal is down reaches the autoscaler once it is back")
	require.NoError(t, stop())
}

// fakeResources is a dynamic client that serves arcflow's three kinds,
// holding objs.
func fakeResources(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.HorizontalRunnerAutoscalerResource: "HorizontalRunnerAutoscalerList",
		v1alpha1.RunnerDeploymentResource:           "RunnerDeploymentList",
		v1alpha1.RunnerSetResource:                  "RunnerSetList",
	}, objs...)
}

// runWatcher runs a ResourceWatcher over dyn and temporal until stop, which
// returns what Run returned, or the test's end.
func runWatcher(t *testing.T, dyn *dynamicfake.FakeDynamicClient, temporal client.Client) (stop func() error) {
	w := &ResourceWatcher{Dynamic: dyn, Kube: kubefake.NewClientset(), Temporal: temporal, TemporalNamespace: "arcflow",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}
