package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func pool(kind string, annotations map[string]any, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": "app", "namespace": "ci", "generation": int64(1), "annotations": annotations},
		"spec":     spec,
	}}
}

func rdSpec(runner map[string]any) map[string]any {
	spec := map[string]any{"repository": "octo/app"}
	for k, v := range runner {
		spec[k] = v
	}
	return map[string]any{"template": map[string]any{"spec": spec}}
}

// A JIT or scale-set pool whose runner image cannot start from a JIT
// configuration says why; other pools, an empty image and a command say nothing.
func TestRunnerImageCondition(t *testing.T) {
	jit := map[string]any{v1alpha1.JITConfigAnnotation: "true"}
	scaleSet := map[string]any{v1alpha1.ScaleSetAnnotation: "arc-app"}
	runnerSet := func(container map[string]any) map[string]any {
		return map[string]any{"organization": "octo", "template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}
	}
	for _, c := range []struct {
		name   string
		u      *unstructured.Unstructured
		reason string
	}{
		{"JIT, summerwind", pool(v1alpha1.KindRunnerDeployment, jit, rdSpec(map[string]any{"image": "summerwind/actions-runner:latest"})), "TokenOnlyImage"},
		{"scale set, GitHub's image without a command", pool(v1alpha1.KindRunnerDeployment, scaleSet,
			rdSpec(map[string]any{"image": "ghcr.io/actions/actions-runner:latest"})), "NoCommand"},
		{"scale-set RunnerSet, summerwind-dind", pool(v1alpha1.KindRunnerSet, scaleSet,
			runnerSet(map[string]any{"name": "runner", "image": "summerwind/actions-runner-dind:latest"})), "TokenOnlyImage"},
		{"JIT, GitHub's image with run.sh", pool(v1alpha1.KindRunnerDeployment, jit, rdSpec(map[string]any{
			"image": "ghcr.io/actions/actions-runner:latest", "containers": []any{map[string]any{"name": "runner", "command": []any{"/home/runner/run.sh"}}},
		})), ""},
		{"JIT, no image", pool(v1alpha1.KindRunnerDeployment, jit, rdSpec(nil)), ""},
		{"tokens, summerwind", pool(v1alpha1.KindRunnerDeployment, nil, rdSpec(map[string]any{"image": "summerwind/actions-runner:latest"})), ""},
		{"JIT off, summerwind", pool(v1alpha1.KindRunnerDeployment, map[string]any{v1alpha1.JITConfigAnnotation: "false"},
			rdSpec(map[string]any{"image": "summerwind/actions-runner:latest"})), ""},
		{"an HRA", pool(kindHRA, jit, map[string]any{}), ""},
	} {
		got, ok := runnerImageCondition(c.u)
		require.Equal(t, c.reason != "", ok, c.name)
		if ok {
			require.Equal(t, runnerImageUnfit, got.Type, c.name)
			require.Equal(t, metav1.ConditionTrue, got.Status, c.name)
			require.Equal(t, c.reason, got.Reason, c.name)
			require.Contains(t, got.Message, `command: ["/home/runner/run.sh"] on the runner container`, c.name)
		}
	}
}

// The condition comes with the Accepted one and a Warning event, and goes
// once the template is mended.
func TestRunnerImageConditionIsWrittenWithAccepted(t *testing.T) {
	rd := pool(v1alpha1.KindRunnerDeployment, map[string]any{v1alpha1.JITConfigAnnotation: "true"},
		rdSpec(map[string]any{"image": "summerwind/actions-runner:latest"}))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.RunnerDeploymentResource: "RunnerDeploymentList",
	}, rd)
	kube := kubeWithNamedEvents()
	w := &ResourceWatcher{Dynamic: dyn, Kube: kube, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	resources := dyn.Resource(v1alpha1.RunnerDeploymentResource).Namespace("ci")
	current := func() *unstructured.Unstructured {
		u, err := resources.Get(ctx, "app", metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}

	w.setConditions(ctx, v1alpha1.KindRunnerDeployment, current(), metav1.ConditionTrue, "Accepted", "accepted", nil)
	require.Equal(t, "True", conditionStatus(current(), "Accepted"), "the pool runs")
	got, ok := conditionOf(current(), runnerImageUnfit)
	require.True(t, ok)
	require.Equal(t, "TokenOnlyImage", got.Reason)
	events, err := kube.CoreV1().Events("ci").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, events.Items, 1)
	require.Equal(t, corev1.EventTypeWarning, events.Items[0].Type)
	require.Equal(t, "TokenOnlyImage", events.Items[0].Reason)

	mended := current()
	require.NoError(t, unstructured.SetNestedField(mended.Object, "", "spec", "template", "spec", "image"))
	mended.SetGeneration(2)
	mended, err = resources.Update(ctx, mended, metav1.UpdateOptions{})
	require.NoError(t, err)
	w.setConditions(ctx, v1alpha1.KindRunnerDeployment, mended, metav1.ConditionTrue, "Accepted", "accepted", nil)
	_, ok = conditionOf(current(), runnerImageUnfit)
	require.False(t, ok, "gone with the summerwind image")
}
