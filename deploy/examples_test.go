package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/worker"
)

// Every manifest under examples/ (the docs show them: tools/docscheck holds
// each block to its file) applies unchanged to a real API server with the CRDs,
// with strict field validation, and what the server stored is what arcflow
// accepts: the typed objects decode without unknown fields, validate, and turn
// into pool and autoscaler specs the way the worker turns them (annotations
// included: a bad arcflow.dev/ value fails here as it would set Accepted=False).
func TestExamplesApplyAndAreAccepted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	tool(t, "kube-apiserver")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stack, err := localstack.Start(ctx, localstack.Options{Kubernetes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.Stop()) })
	require.NoError(t, stack.InstallCRDs(ctx, "crds"))
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)

	files, err := filepath.Glob("examples/*.yaml")
	require.NoError(t, err)
	nested, err := filepath.Glob("examples/*/*.yaml")
	require.NoError(t, err)
	files = append(files, nested...)
	require.GreaterOrEqual(t, len(files), 7, "examples/ and examples/beyond-arc/")

	for i, file := range files {
		ns := "examples-" + strings.TrimSuffix(filepath.Base(file), ".yaml") + "-" + string(rune('a'+i))
		out, err := stack.Kubectl(ctx, "create", "namespace", ns)
		require.NoError(t, err, out)
		out, err = stack.Kubectl(ctx, "apply", "--server-side", "--validate=strict", "-n", ns, "-f", file)
		require.NoError(t, err, "%s: %s", file, out)

		targets := map[string]hraspec.Target{}
		var hras []v1alpha1.HorizontalRunnerAutoscaler
		for _, obj := range documents(t, file) {
			name := obj.GetName()
			switch obj.GetKind() {
			case "RunnerDeployment":
				var rd v1alpha1.RunnerDeployment
				stored(t, ctx, dyn, v1alpha1.RunnerDeploymentResource, ns, name, &rd)
				require.NoError(t, rd.Validate(), file)
				_, err := worker.RunnerDeploymentPoolSpec(&rd, "https://github.com/")
				require.NoError(t, err, file)
				targets["RunnerDeployment/"+name] = hraspec.TargetOfRunnerDeployment(&rd)
			case "RunnerSet":
				var rs v1alpha1.RunnerSet
				stored(t, ctx, dyn, v1alpha1.RunnerSetResource, ns, name, &rs)
				require.NoError(t, rs.Validate(), file)
				_, err := worker.RunnerSetPoolSpec(&rs, "https://github.com/")
				require.NoError(t, err, file)
				targets["RunnerSet/"+name] = hraspec.TargetOfRunnerSet(&rs)
			case "HorizontalRunnerAutoscaler":
				var hra v1alpha1.HorizontalRunnerAutoscaler
				stored(t, ctx, dyn, v1alpha1.HorizontalRunnerAutoscalerResource, ns, name, &hra)
				hras = append(hras, hra)
			default:
				t.Fatalf("%s: %s is not an ARC kind", file, obj.GetKind())
			}
		}
		for _, hra := range hras {
			target, ok := targets[hra.Spec.TargetKind()+"/"+hra.Spec.ScaleTargetRef.Name]
			require.True(t, ok, "%s: HRA %s scales a target the file does not hold", file, hra.Name)
			_, err := hraspec.Of(&hra, target, hraspec.Options{DefaultScaleDownDelay: 10 * time.Minute})
			require.NoError(t, err, "%s: HRA %s", file, hra.Name)
		}
	}
}

// documents splits a YAML file into its objects.
func documents(t *testing.T, file string) []unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var objs []unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs
		} else {
			require.NoError(t, err, file)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// stored reads an object back from the API server and decodes it strictly:
// the server kept no field the Go types lack.
func stored(t *testing.T, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, into any) {
	t.Helper()
	obj, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, into, true), "%s %s/%s", gvr.Resource, ns, name)
}
