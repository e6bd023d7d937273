package localstack_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// JSONPath prints what kubectl get -o jsonpath prints, for one object and for
// a list, by short names, for a missing key, and for a CRD installed after
// its first read.
func TestJSONPathPrintsWhatKubectlPrints(t *testing.T) {
	ctx := testContext(t)
	const ns = "jsonpath"
	for _, args := range [][]string{
		{"create", "namespace", ns},
		{"create", "configmap", "-n", ns, "one", "--from-literal=a=1"},
		{"create", "configmap", "-n", ns, "two", "--from-literal=a=2"},
	} {
		out, err := stack.Kubectl(ctx, args...)
		require.NoError(t, err, out)
	}
	same := func(resource, name, template string) {
		t.Helper()
		args := []string{"get", "-n", ns, resource}
		if name != "" {
			args = append(args, name)
		}
		want, err := stack.Kubectl(ctx, append(args, "-o", "jsonpath="+template)...)
		require.NoError(t, err, want)
		got, err := stack.JSONPath(ctx, ns, resource, name, template)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s %s %s", resource, name, template)
	}
	same("cm", "one", "{.data.a}")
	same("configmaps", "", `{range .items[*]}{.metadata.name}={.data.a}{"\n"}{end}`)
	same("cm", "one", "{.data.missing}")
	same("cm", "one", `{.metadata.name} {.data.a}`)

	_, err := stack.JSONPath(ctx, ns, "cm", "three", "{.data.a}")
	require.True(t, apierrors.IsNotFound(err), "a missing object is NotFound: %v", err)

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.NoError(t, stack.InstallCRDs(ctx, filepath.Join(root, "deploy", "crds")))
	out, err := stack.Kubectl(ctx, "apply", "-n", ns, "-f", filepath.Join(root, "deploy", "examples", "runnerdeployment.yaml"))
	require.NoError(t, err, out)
	names, err := stack.Kubectl(ctx, "get", "-n", ns, "rdeploy", "-o", "jsonpath={.items[0].metadata.name}")
	require.NoError(t, err, names)
	same("rdeploy", names, `{.spec.template.spec.labels}`)
	same("hra", "", `{range .items[*]}{.metadata.name} {.spec.maxReplicas}{"\n"}{end}`)
}
