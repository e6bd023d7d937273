package github

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gogithub "github.com/google/go-github/v88/github"
	"github.com/gregjones/httpcache"
	"golang.org/x/sync/singleflight"
)

// Client is a GitHub client for one credential set. It holds the HTTP cache and
// the registration-token cache of that set, so build one per credential set and
// share it: API calls then grow with scopes, not runners.
type Client struct {
	gh      *gogithub.Client
	config  Config
	metrics *Metrics
	now     func() time.Time

	tokens       *tokenCache
	tokenFlights singleflight.Group

	// lists are the scopes' shared runner lists (runnerlist.go), read at most
	// once per listInterval while something waits on them.
	lists        runnerLists
	listFlights  singleflight.Group
	listInterval time.Duration
	// budget is what GitHub last said of the credential's rate limit (budget.go).
	budget *budget
}

// Options tune a Client; the zero value is ready for production.
type Options struct {
	// Metrics receives call counts and rate limits; nil creates unregistered ones.
	Metrics *Metrics
	// Transport is the network transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Now is the clock of the token cache; nil means time.Now.
	Now func() time.Time
	// RunnerListInterval is how old a scope's shared runner list may be
	// (DefaultRunnerListInterval when zero).
	RunnerListInterval time.Duration
	// BudgetShare is the share of the credential's hourly rate limit arcflow
	// plans within (DefaultBudgetShare when zero): past it, deferrable calls
	// wait for the window to reset.
	BudgetShare float64
}

// New builds a client. Requests go through, outermost first: the RFC 7234 cache
// (Cache-Control max-age, ETag revalidation), the call counter, authentication.
func New(cfg Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	apiURL, err := url.Parse(cfg.APIBaseURL())
	if err != nil {
		return nil, fmt.Errorf("github api url: %w", err)
	}

	auth, err := authTransport(cfg, base, apiURL)
	if err != nil {
		return nil, err
	}
	if opts.RunnerListInterval <= 0 {
		opts.RunnerListInterval = DefaultRunnerListInterval
	}
	b := newBudget(opts.BudgetShare, opts.Now, opts.Metrics, cfg.CredentialName())
	counted := &countingTransport{next: auth, metrics: opts.Metrics, credential: cfg.CredentialName(), budget: b}
	cache := httpcache.NewMemoryCacheTransport()
	cache.Transport = counted

	apiBase := apiURL.String()
	gh, err := gogithub.NewClient(
		gogithub.WithHTTPClient(&http.Client{Transport: &freshTransport{next: cache}, Timeout: 30 * time.Second}),
		gogithub.WithURLs(&apiBase, &apiBase),
		gogithub.WithUserAgent("arcflow"),
	)
	if err != nil {
		return nil, fmt.Errorf("github client: %w", err)
	}
	return &Client{gh: gh, config: cfg, metrics: opts.Metrics, now: opts.Now, tokens: newTokenCache(),
		lists: runnerLists{byScope: map[string]runnerList{}}, listInterval: opts.RunnerListInterval, budget: b}, nil
}

func authTransport(cfg Config, base http.RoundTripper, apiURL *url.URL) (http.RoundTripper, error) {
	if cfg.Token != "" {
		return &tokenTransport{next: base, token: cfg.Token}, nil
	}
	key := []byte(cfg.AppPrivateKey)
	if !strings.Contains(cfg.AppPrivateKey, "-----BEGIN") {
		data, err := os.ReadFile(cfg.AppPrivateKey)
		if err != nil {
			return nil, fmt.Errorf("github app private key: read the file named by GITHUB_APP_PRIVATE_KEY: %w", err)
		}
		key = data
	}
	itr, err := ghinstallation.New(base, cfg.AppID, cfg.AppInstallationID, key)
	if err != nil {
		// ghinstallation's error says why the key does not parse, not what it holds.
		return nil, fmt.Errorf("github app: %w", err)
	}
	itr.BaseURL = strings.TrimSuffix(apiURL.String(), "/")
	return itr, nil
}

// APIBaseURL is the REST API base this client calls.
func (c *Client) APIBaseURL() string { return c.config.APIBaseURL() }

// RunnerURL is the GITHUB_URL runners of this client register against.
func (c *Client) RunnerURL() string { return c.config.RunnerURL() }

// Metrics returns the client's collectors.
func (c *Client) Metrics() *Metrics { return c.metrics }
