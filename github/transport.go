package github

import (
	"context"
	"net/http"
	"strconv"
)

type endpointKey struct{}

// withEndpoint names the API operation of a request for metrics and errors.
func withEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}

type purposeKey struct{}

// WithPurpose says what a read of a scope's runner list is for, for
// arcflow_github_runner_list_reads_total: the read that calls GitHub is
// counted under the purpose of the caller that made it.
func WithPurpose(ctx context.Context, purpose string) context.Context {
	return context.WithValue(ctx, purposeKey{}, purpose)
}

func purposeOf(ctx context.Context) string {
	if p, ok := ctx.Value(purposeKey{}).(string); ok {
		return p
	}
	return "other"
}

func endpointOf(ctx context.Context) string {
	if e, ok := ctx.Value(endpointKey{}).(string); ok {
		return e
	}
	return "other"
}

// countingTransport sits below the HTTP cache, so it sees only the calls that reach
// GitHub. It counts them and records the rate-limit headers.
type countingTransport struct {
	next       http.RoundTripper
	metrics    *Metrics
	credential string
	budget     *budget
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	status := "error"
	if err == nil {
		status = strconv.Itoa(resp.StatusCode)
		if v, perr := strconv.ParseFloat(resp.Header.Get("X-RateLimit-Limit"), 64); perr == nil {
			t.metrics.RateLimit.WithLabelValues(t.credential).Set(v)
		}
		if v, perr := strconv.ParseFloat(resp.Header.Get("X-RateLimit-Remaining"), 64); perr == nil {
			t.metrics.RateLimitRemaining.WithLabelValues(t.credential).Set(v)
		}
		t.budget.observe(resp.Header)
	}
	t.metrics.Calls.WithLabelValues(t.credential, endpointOf(req.Context()), status).Inc()
	return resp, err
}

// tokenTransport authenticates with a personal access token.
type tokenTransport struct {
	next  http.RoundTripper
	token string
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(req)
}

type freshKey struct{}

// WithFresh makes the reads under ctx revalidate with GitHub instead of
// being served from the HTTP cache (a 304 when nothing changed): for a caller
// that has no history to go on, such as an autoscaler rebuilding after
// Temporal's store was lost, for which a cached list of runs from before
// would hide the jobs that queued meanwhile.
func WithFresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

// freshTransport sits above the HTTP cache and asks it to revalidate the
// requests of a WithFresh context.
type freshTransport struct {
	next http.RoundTripper
}

func (t *freshTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if fresh, _ := req.Context().Value(freshKey{}).(bool); fresh {
		req = req.Clone(req.Context())
		req.Header.Set("Cache-Control", "max-age=0")
	}
	return t.next.RoundTrip(req)
}
