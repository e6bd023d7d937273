package worker

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/mocks"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
)

// scaleSetPool is a RunnerDeployment that joins the scale set arc-linux.
func scaleSetPool() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindRunnerDeployment,
		"metadata": map[string]any{"name": "linux", "namespace": "ci", "generation": int64(1),
			"annotations": map[string]any{v1alpha1.ScaleSetAnnotation: "arc-linux"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"organization": "octo"}}},
	}}
}

func listerOf(objs ...*unstructured.Unstructured) cache.GenericLister {
	index := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = index.Add(o)
	}
	return cache.NewGenericLister(index, v1alpha1.RunnerDeploymentResource.GroupResource())
}

// A pool's change re-queues its HRA; the HRA path then sends the listener
// nothing the pool path just sent, but does send a change of its own.
func TestTheHRAPathSendsTheListenerOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	pool, hraObj := scaleSetPool(), rerunHRA("linux", "linux", true)
	temporal := mocks.NewClient(t)
	var sent []workflows.ScaleSetSpec
	temporal.On("SignalWithStartWorkflow", mock.Anything, "scaleset/ci/runnerdeployment/linux", "spec", mock.Anything, mock.Anything, mock.Anything, mock.Anything).
		Run(func(args mock.Arguments) { sent = append(sent, args.Get(3).(workflows.ScaleSetSpec)) }).Return(nil, nil)
	w := &ResourceWatcher{Temporal: temporal, hras: listerOf(hraObj), rds: listerOf(pool), rss: listerOf()}

	spec, err := w.poolSpec(v1alpha1.KindRunnerDeployment, pool)
	require.NoError(t, err)
	require.NotNil(t, spec.ScaleSet)
	require.NoError(t, w.scaleSetFollows(ctx, v1alpha1.KindRunnerDeployment, pool, spec))
	require.Len(t, sent, 1, "the pool path sends the spec")
	require.Equal(t, 5, sent[0].MaxRunners, "the HRA's maxReplicas is the set's capacity")
	require.Zero(t, sent[0].MinRunners, "no minReplicas")

	hra, ok := w.hraOf(v1alpha1.KindRunnerDeployment, "ci", "linux")
	require.True(t, ok)
	require.NoError(t, w.refreshScaleSetOf(ctx, &hra))
	require.Len(t, sent, 1, "the HRA re-queued by the pool's change sends nothing new")

	require.NoError(t, unstructured.SetNestedField(hraObj.Object, int64(9), "spec", "maxReplicas"))
	w.hras = listerOf(hraObj)
	hra, _ = w.hraOf(v1alpha1.KindRunnerDeployment, "ci", "linux")
	require.NoError(t, w.refreshScaleSetOf(ctx, &hra))
	require.Len(t, sent, 2, "a change of the HRA's own is sent")
	require.Equal(t, 9, sent[1].MaxRunners)

	require.NoError(t, unstructured.SetNestedField(hraObj.Object, int64(2), "spec", "minReplicas"))
	w.hras = listerOf(hraObj)
	hra, _ = w.hraOf(v1alpha1.KindRunnerDeployment, "ci", "linux")
	require.NoError(t, w.refreshScaleSetOf(ctx, &hra))
	require.Len(t, sent, 3, "minReplicas, for the listener's gha_min_runners, is sent too")
	require.Equal(t, 2, sent[2].MinRunners)

	require.NoError(t, w.scaleSetFollows(ctx, v1alpha1.KindRunnerDeployment, pool, spec))
	require.Len(t, sent, 4, "the pool path always sends: it is what starts a lost listener again")
}
