package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/arcflow/arcflow/github"
)

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
