package calls

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
)

// Application error types that cross the activity boundary. Workflows branch on
// them; retry policies name them as non-retryable.
const (
	// ErrTypeRunnerBusy: GitHub refused to remove a runner that runs a job (422).
	ErrTypeRunnerBusy = "RunnerBusy"
	// ErrTypeRateLimited: a GitHub rate limit; the details hold a RateLimitDetails.
	ErrTypeRateLimited = "RateLimited"
	// ErrTypeInvalidSpec: Kubernetes rejected the runner's pod as invalid.
	ErrTypeInvalidSpec = "InvalidSpec"
	// ErrTypeForbidden: the worker's RBAC does not allow the call; retrying
	// will not help until an operator grants it.
	ErrTypeForbidden = "Forbidden"
)

// RateLimitDetails tells a workflow when it may call GitHub again.
type RateLimitDetails struct {
	Reset     time.Time
	Secondary bool
}

// IsErrorType reports whether err is an application error of the given type.
func IsErrorType(err error, errType string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == errType
}

// RateLimitReset extracts the reset time of a RateLimited error.
func RateLimitReset(err error) (time.Time, bool) {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrTypeRateLimited {
		return time.Time{}, false
	}
	var details RateLimitDetails
	if appErr.Details(&details) != nil {
		return time.Time{}, false
	}
	return details.Reset, true
}

// ErrTypeAdmissionRefused: an admission webhook refused a write, or could not
// be called (failurePolicy Fail with nothing serving it). Retrying at once does
// not help; the workflow waits and tries again, and an operator fixes the
// webhook.
const ErrTypeAdmissionRefused = "AdmissionRefused"
