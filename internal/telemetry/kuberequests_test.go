package telemetry

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRequestResourceNamesTheResourceAndSubresource(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/ci/pods":                                                       "pods",
		"/api/v1/namespaces/ci/pods/app-x1/status":                                         "pods/status",
		"/api/v1/namespaces/ci":                                                            "namespaces",
		"/apis/apps/v1/namespaces/ci/statefulsets/set-a":                                   "statefulsets",
		"/apis/actions.summerwind.dev/v1alpha1/namespaces/ci/runnerdeployments/app/status": "runnerdeployments/status",
		"/apis/coordination.k8s.io/v1/namespaces/ci/leases/arcflow":                        "leases",
		"/api/v1/nodes": "nodes",
		"/api":          "other",
		"/apis/apps/v1": "discovery",
	} {
		require.Equal(t, want, requestResource(path), path)
	}
}
