package scaleset

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The errors a caller branches on. The service names its errors by typeName,
// which ServiceError.Is matches; the status alone is not enough.
var (
	// ErrSessionConflict: the set has a live session (409); wait and try again.
	ErrSessionConflict = errors.New("scaleset: the scale set has an active session")
	// ErrScaleSetNotFound: the set is gone (deleted, or by the service after days offline).
	ErrScaleSetNotFound = errors.New("scaleset: scale set not found")
	// ErrSessionNotFound: the session expired or was evicted; create a new one.
	ErrSessionNotFound = errors.New("scaleset: session not found")
	// ErrSessionExpired: the session expired (a 400 on its DELETE, among
	// others); it holds the set no more, so it counts as lost.
	ErrSessionExpired = errors.New("scaleset: session expired")
	// ErrRunnerBusy: the runner runs a job and cannot be removed.
	ErrRunnerBusy = errors.New("scaleset: the runner is running a job")
	// ErrRunnerExists: a runner of that name exists (generatejitconfig).
	ErrRunnerExists = errors.New("scaleset: a runner of that name exists")
	// ErrRunnerNotFound: no runner of that id or name.
	ErrRunnerNotFound = errors.New("scaleset: runner not found")
	// ErrUnauthorized: a token was refused (401).
	ErrUnauthorized = errors.New("scaleset: unauthorized")
)

// exceptionOf names the service's exception for each sentinel. The service
// sends the full .NET type name with its assembly, for example
// "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException,
// GitHub.Actions.Runtime.WebApi", so a name is matched as a part of typeName,
// as GitHub's own clients match it, never as all of it.
var exceptionOf = map[error]string{
	ErrSessionConflict:  "RunnerScaleSetSessionConflictException",
	ErrScaleSetNotFound: "RunnerScaleSetNotFoundException",
	ErrSessionNotFound:  "RunnerScaleSetSessionNotFoundException",
	ErrSessionExpired:   "RunnerScaleSetSessionExpiredException",
	ErrRunnerBusy:       "JobStillRunningException",
	ErrRunnerExists:     "AgentExistsException",
	ErrRunnerNotFound:   "AgentNotFoundException",
}

// ServiceError is an answer of the Actions service that is not a success. It
// holds the service's own words and the ids GitHub support asks for, never a
// token.
type ServiceError struct {
	Op         string
	Status     int
	TypeName   string
	Message    string
	RetryAfter time.Duration
	// ActivityID and RequestID are the answer's ActivityId and
	// X-GitHub-Request-Id headers.
	ActivityID, RequestID string
}

func (e *ServiceError) Error() string {
	msg := e.Message
	if e.TypeName != "" {
		msg = e.TypeName + ": " + msg
	}
	var ids []string
	if e.ActivityID != "" {
		ids = append(ids, "activity_id="+e.ActivityID)
	}
	if e.RequestID != "" {
		ids = append(ids, "github_request_id="+e.RequestID)
	}
	if len(ids) > 0 {
		msg += " (" + strings.Join(ids, ", ") + ")"
	}
	return fmt.Sprintf("scaleset: %s: %d %s", e.Op, e.Status, msg)
}

// Is matches the sentinel errors by the exception in typeName; where the
// service may answer with no typeName, by the operation and status.
func (e *ServiceError) Is(target error) bool {
	if target == ErrUnauthorized {
		return e.Status == http.StatusUnauthorized
	}
	name, ok := exceptionOf[target]
	if !ok {
		return false
	}
	if e.TypeName != "" {
		return strings.Contains(e.TypeName, name)
	}
	switch target {
	case ErrSessionConflict:
		return e.Status == http.StatusConflict && e.Op == opCreateSession
	case ErrSessionNotFound:
		return e.Status == http.StatusNotFound && e.Op == opRefreshSession
	}
	return false
}

// Retryable reports whether the call may succeed if made again: transport
// errors, 429 and 5xx other than 501. Other 4xx are final.
func Retryable(err error) bool {
	var se *ServiceError
	if !errors.As(err, &se) {
		return err != nil
	}
	return se.Status == http.StatusTooManyRequests || (se.Status >= 500 && se.Status != http.StatusNotImplemented)
}

// RetryAfterOf is the wait the service asked for (Retry-After), or 0.
func RetryAfterOf(err error) time.Duration {
	var se *ServiceError
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
}

// StatusOf is the service's HTTP status in err, 0 when it did not answer.
func StatusOf(err error) int {
	var se *ServiceError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
