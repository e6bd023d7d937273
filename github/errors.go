package github

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v88/github"
)

var (
	// ErrRunnerBusy is GitHub's 422 on removing a runner that is running a job.
	ErrRunnerBusy = errors.New("github: runner is busy running a job")
	// ErrNotFound is a 404: the runner, scope or resource does not exist (or the
	// credentials cannot see it).
	ErrNotFound = errors.New("github: not found")
)

// RateLimitError says a primary or secondary rate limit was hit and when to retry.
type RateLimitError struct {
	// Reset is when calls may resume.
	Reset time.Time
	// Secondary is true for GitHub's secondary (abuse) limits.
	Secondary bool
	Endpoint  string
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	return fmt.Sprintf("github: %s rate limit on %s until %s", kind, e.Endpoint, e.Reset.UTC().Format(time.RFC3339))
}

// classify turns go-github's errors into the package's typed errors, wrapped with
// the endpoint. Bodies and URLs of error responses hold no credentials.
func classify(endpoint string, resp *gogithub.Response, err error, now time.Time) error {
	if err == nil {
		return nil
	}
	var primary *gogithub.RateLimitError
	if errors.As(err, &primary) {
		return &RateLimitError{Reset: primary.Rate.Reset.Time, Endpoint: endpoint}
	}
	var secondary *gogithub.AbuseRateLimitError
	if errors.As(err, &secondary) {
		wait := time.Minute // GitHub's advice when it gives no Retry-After
		if secondary.RetryAfter != nil {
			wait = *secondary.RetryAfter
		}
		return &RateLimitError{Reset: now.Add(wait), Secondary: true, Endpoint: endpoint}
	}
	if resp != nil {
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w", endpoint, ErrNotFound)
		case http.StatusUnprocessableEntity:
			return fmt.Errorf("%s: %w", endpoint, ErrRunnerBusy)
		}
	}
	return fmt.Errorf("%s: %w", endpoint, err)
}
