package github

import (
	"context"
	"sync"
	"time"
)

// TokenReuseMargin: a cached registration token is reused while it has more than
// this long left, so a runner that starts now can still register with it.
const TokenReuseMargin = 30 * time.Minute

// RegistrationToken is a short-lived token runners register with. It formats as
// [redacted] so it cannot leak into a log line or error by accident.
type RegistrationToken struct {
	value     string
	ExpiresAt time.Time
}

// Value returns the secret itself, for writing into a Kubernetes Secret.
func (t RegistrationToken) Value() string { return t.value }

func (t RegistrationToken) String() string   { return "[redacted]" }
func (t RegistrationToken) GoString() string { return "[redacted]" }

type tokenCache struct {
	mu     sync.Mutex
	tokens map[string]RegistrationToken
}

func newTokenCache() *tokenCache { return &tokenCache{tokens: map[string]RegistrationToken{}} }

func (c *tokenCache) get(scope string, now time.Time) (RegistrationToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tokens[scope]
	if !ok || !t.ExpiresAt.After(now.Add(TokenReuseMargin)) {
		return RegistrationToken{}, false
	}
	return t, true
}

func (c *tokenCache) put(scope string, t RegistrationToken, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens[scope] = t
	for k, old := range c.tokens {
		if !old.ExpiresAt.After(now) {
			delete(c.tokens, k)
		}
	}
}

// RegistrationToken returns a token for the scope: the cached one while it has more
// than 30 minutes left, else a new one. Concurrent calls for a scope share one
// request.
func (c *Client) RegistrationToken(ctx context.Context, scope Scope) (RegistrationToken, error) {
	key := scope.String()
	if t, ok := c.tokens.get(key, c.now()); ok {
		return t, nil
	}
	v, err, _ := c.tokenFlights.Do(key, func() (any, error) {
		if t, ok := c.tokens.get(key, c.now()); ok {
			return t, nil
		}
		t, err := c.createRegistrationToken(ctx, scope)
		if err != nil {
			return RegistrationToken{}, err
		}
		c.tokens.put(key, t, c.now())
		return t, nil
	})
	if err != nil {
		return RegistrationToken{}, err
	}
	return v.(RegistrationToken), nil
}

func (c *Client) createRegistrationToken(ctx context.Context, scope Scope) (RegistrationToken, error) {
	if err := scope.Validate(); err != nil {
		return RegistrationToken{}, err
	}
	const endpoint = "create-registration-token"
	ctx = withEndpoint(ctx, endpoint)
	var (
		tok  *gogithubRegistrationToken
		resp *gogithubResponse
		err  error
	)
	switch {
	case scope.Repository != "":
		owner, repo := ownerRepo(scope)
		tok, resp, err = c.gh.Actions.CreateRegistrationToken(ctx, owner, repo)
	case scope.Organization != "":
		tok, resp, err = c.gh.Actions.CreateOrganizationRegistrationToken(ctx, scope.Organization)
	default:
		tok, resp, err = c.gh.Enterprise.CreateRegistrationToken(ctx, scope.Enterprise)
	}
	if err := classify(endpoint+" "+scope.String(), resp, err, c.now()); err != nil {
		return RegistrationToken{}, err
	}
	return RegistrationToken{value: tok.GetToken(), ExpiresAt: tok.GetExpiresAt().Time}, nil
}
