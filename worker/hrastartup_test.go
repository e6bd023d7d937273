package worker

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Before the caches sync, an HRA whose target is not found yet is held for
// later, not reported; after, a missing target is a real problem and is not
// held. Other errors are never held.
func TestHRAsWithATargetNotCachedYetWaitForTheSync(t *testing.T) {
	var s startupHRAs
	hra := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("ci")
		u.SetName(name)
		return u
	}
	notFound := fmt.Errorf("scale target RunnerDeployment app: %w",
		apierrors.NewNotFound(schema.GroupResource{Group: "actions.summerwind.dev", Resource: "runnerdeployment"}, "app"))
	require.True(t, s.hold(hra("a"), notFound))
	require.True(t, s.hold(hra("a"), notFound), "held once, by name")
	require.True(t, s.hold(hra("b"), notFound))
	require.False(t, s.hold(hra("c"), errors.New("unsupported scale target kind \"Deployment\"")), "a bad spec is reported at once")
	require.Len(t, s.release(), 2)
	require.False(t, s.hold(hra("d"), notFound), "after the sync a missing target is reported")
	require.Empty(t, s.release())
}
