package scaleset

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
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
	// ErrRunnerBusy: the runner runs a job and cannot be removed.
	ErrRunnerBusy = errors.New("scaleset: the runner is running a job")
	// ErrRunnerExists: a runner of that name exists (generatejitconfig).
	ErrRunnerExists = errors.New("scaleset: a runner of that name exists")
	// ErrUnauthorized: a token was refused (401).
	ErrUnauthorized = errors.New("scaleset: unauthorized")
)

// ServiceError is an answer of the Actions service that is not a success. It
// holds the service's own words, never a token.
type ServiceError struct {
	Op         string
	Status     int
	TypeName   string
	Message    string
	RetryAfter time.Duration
}

func (e *ServiceError) Error() string {
	msg := e.Message
	if e.TypeName != "" {
		msg = e.TypeName + ": " + msg
	}
	return fmt.Sprintf("scaleset: %s: %d %s", e.Op, e.Status, msg)
}

// Is matches the sentinel errors by typeName, then by status.
func (e *ServiceError) Is(target error) bool {
	switch target {
	case ErrSessionConflict:
		return e.TypeName == "RunnerScaleSetSessionConflictException" || (e.TypeName == "" && e.Status == http.StatusConflict && e.Op == "create session")
	case ErrScaleSetNotFound:
		return e.TypeName == "RunnerScaleSetNotFoundException"
	case ErrSessionNotFound:
		return e.TypeName == "RunnerScaleSetSessionNotFoundException" || (e.Status == http.StatusNotFound && e.Op == "refresh session")
	case ErrRunnerBusy:
		return e.TypeName == "JobStillRunningException"
	case ErrRunnerExists:
		return e.TypeName == "AgentExistsException"
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
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

func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
