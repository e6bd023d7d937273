package scaleset

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The service's typeName is the full .NET name with its assembly; each form
// seen or documented must match its sentinel, and no other.
func TestServiceErrorsMatchTheServicesFullTypeNames(t *testing.T) {
	const runtime = "GitHub.Actions.Runtime.WebApi"
	const distributed = "GitHub.DistributedTask.WebApi"
	cases := []struct {
		typeName string
		status   int
		op       string
		want     error
	}{
		// Quoted from a real answer in ARC issue #4285.
		{runtime + ".RunnerScaleSetSessionConflictException, " + runtime, http.StatusConflict, opCreateSession, ErrSessionConflict},
		{runtime + ".RunnerScaleSetNotFoundException, " + runtime, http.StatusNotFound, opCreateSession, ErrScaleSetNotFound},
		// The form a listener logged when the service deleted its set.
		{"RunnerScaleSetNotFoundException, " + distributed, http.StatusNotFound, opCreateSession, ErrScaleSetNotFound},
		{runtime + ".RunnerScaleSetSessionNotFoundException, " + runtime, http.StatusNotFound, opGetMessage, ErrSessionNotFound},
		// Seen on a session's DELETE in ARC issue #4285.
		{runtime + ".RunnerScaleSetSessionExpiredException, " + runtime, http.StatusBadRequest, "delete session", ErrSessionExpired},
		{distributed + ".JobStillRunningException, " + distributed, http.StatusBadRequest, "remove runner", ErrRunnerBusy},
		{distributed + ".AgentExistsException, " + distributed, http.StatusConflict, "generate jit config", ErrRunnerExists},
		{distributed + ".AgentNotFoundException, " + distributed, http.StatusNotFound, "get runner", ErrRunnerNotFound},
		// The short names a fake may send still match.
		{"RunnerScaleSetSessionConflictException", http.StatusConflict, opCreateSession, ErrSessionConflict},
		{"JobStillRunningException", http.StatusBadRequest, "remove runner", ErrRunnerBusy},
	}
	all := []error{ErrSessionConflict, ErrScaleSetNotFound, ErrSessionNotFound, ErrSessionExpired, ErrRunnerBusy, ErrRunnerExists, ErrRunnerNotFound}
	for _, c := range cases {
		t.Run(c.typeName, func(t *testing.T) {
			err := fmt.Errorf("wrapped: %w", &ServiceError{Op: c.op, Status: c.status, TypeName: c.typeName, Message: "m"})
			for _, sentinel := range all {
				require.Equal(t, sentinel == c.want, errors.Is(err, sentinel), "errors.Is(%q, %v)", c.typeName, sentinel)
			}
		})
	}
}

// With no typeName, a 409 on a session's creation is a conflict and a 404 on
// its refresh a lost session; any other 404 is neither.
func TestServiceErrorsWithoutATypeName(t *testing.T) {
	require.ErrorIs(t, &ServiceError{Op: opCreateSession, Status: http.StatusConflict}, ErrSessionConflict)
	require.ErrorIs(t, &ServiceError{Op: opRefreshSession, Status: http.StatusNotFound}, ErrSessionNotFound)
	require.NotErrorIs(t, &ServiceError{Op: "acquirable jobs", Status: http.StatusNotFound}, ErrSessionNotFound)
	require.NotErrorIs(t, &ServiceError{Op: "acquirable jobs", Status: http.StatusNotFound}, ErrScaleSetNotFound)
	require.ErrorIs(t, &ServiceError{Op: "get scale set", Status: http.StatusUnauthorized}, ErrUnauthorized)
}

// An error carries the ids GitHub support asks for.
func TestServiceErrorsNameTheRequestIDs(t *testing.T) {
	err := &ServiceError{Op: opCreateSession, Status: 409, TypeName: "X", Message: "held", ActivityID: "a-1", RequestID: "r-2"}
	require.True(t, strings.Contains(err.Error(), "activity_id=a-1") && strings.Contains(err.Error(), "github_request_id=r-2"), err.Error())
}
