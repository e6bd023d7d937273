package scaleset

import (
	"context"
	"net/http"
	"sync"

	"github.com/arcflow/arcflow/github"
)

// Clients keeps one Client per GitHub client, that is per credential set, so
// the scopes of a credential set share its admin and session tokens.
type Clients struct {
	// Resolve gives the GitHub client of a githubAPICredentialsFrom Secret
	// ("namespace/name"), or the worker's own for "".
	Resolve func(ctx context.Context, credentials string) (*github.Client, error)
	// Transport is the network transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// OnCall hears each call (Options.OnCall).
	OnCall func(op string, status int)
	// Version is arcflow's, for the User-Agent (Options.Version).
	Version string

	mu       sync.Mutex
	byClient map[*github.Client]*Client
}

// For is the client that acts for the scope's credentials.
func (c *Clients) For(ctx context.Context, scope github.Scope) (*Client, error) {
	gh, err := c.Resolve(ctx, scope.Credentials)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.byClient[gh]; ok {
		return client, nil
	}
	if c.byClient == nil {
		c.byClient = map[*github.Client]*Client{}
	}
	client := New(gh, Options{APIBaseURL: gh.APIBaseURL(), RunnerURL: gh.RunnerURL(), Transport: c.Transport, OnCall: c.OnCall, Version: c.Version})
	c.byClient[gh] = client
	return client, nil
}
