package activities

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/github"
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

// githubError turns the GitHub client's typed errors into application errors. The
// client's errors carry endpoints and scopes, never tokens.
func githubError(err error) error {
	var rl *github.RateLimitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rl):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRateLimited, err, RateLimitDetails{Reset: rl.Reset, Secondary: rl.Secondary})
	case errors.Is(err, github.ErrRunnerBusy):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRunnerBusy, err)
	}
	return err
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
