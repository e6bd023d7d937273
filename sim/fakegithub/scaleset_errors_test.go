package fakegithub

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every exception the fake sends is in the service's full form, in the
// assembly the real service puts it in.
func TestExceptionsHaveTheirFullTypeNames(t *testing.T) {
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException, GitHub.Actions.Runtime.WebApi",
		excSessionConflict.typeName(), "as quoted from the service in ARC issue #4285")
	runtime := []actionsException{excSetNotFound, excSetExists, excSessionConflict, excSessionNotFound, excSessionExpired}
	for _, e := range runtime {
		require.Equal(t, "GitHub.Actions.Runtime.WebApi."+e.short+", GitHub.Actions.Runtime.WebApi", e.typeName())
	}
	task := []actionsException{excAgentExists, excAgentNotFound, excJobStillRunning, excArgument}
	for _, e := range task {
		require.Equal(t, "GitHub.DistributedTask.WebApi."+e.short+", GitHub.DistributedTask.WebApi", e.typeName())
	}
}

func TestResponseIDsAreShapedAsTheServices(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	request := regexp.MustCompile(`^[0-9A-F]{4}:[0-9A-F]{4}:[0-9A-F]{6}:[0-9A-F]{6}:[0-9A-F]{8}$`)
	a, b := newActivityID(), newActivityID()
	require.Regexp(t, uuid, a)
	require.NotEqual(t, a, b)
	require.Regexp(t, request, newRequestID())
}
