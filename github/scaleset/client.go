package scaleset

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/arcflow/arcflow/github"
)

// apiVersion is the query every Actions service call carries.
const apiVersion = "api-version=6.0-preview"

// adminRefreshBefore is how long before its expiry the admin token is replaced.
const adminRefreshBefore = 2 * time.Minute

// TokenSource hands out registration tokens; arcflow's GitHub client, with
// its shared token cache, is one.
type TokenSource interface {
	RegistrationToken(ctx context.Context, scope github.Scope) (github.RegistrationToken, error)
}

// Options configure a Client.
type Options struct {
	// APIBaseURL is GitHub's REST API base (https://api.github.com/, or a
	// GitHub Enterprise Server's /api/v3/); RunnerURL its web URL
	// (https://github.com/), which configuration URLs start with.
	APIBaseURL, RunnerURL string
	// Transport is the network transport; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Now is the clock the admin token's expiry is read against; nil means time.Now.
	Now func() time.Time
	// OnCall hears each call's operation and status (0: no answer); nil ignores them.
	OnCall func(op string, status int)
	// Version is arcflow's, for the User-Agent GitHub's logs show.
	Version string
	// RegistrationRetryBase paces the retries of runner-registration, whose
	// 401 and 403 can be transient: 1 s, doubling, when zero.
	RegistrationRetryBase time.Duration
}

// registrationAttempts is how many times runner-registration is tried.
const registrationAttempts = 5

// Client talks to the Actions service for any number of scopes. It keeps each
// scope's admin token and each session's queue token in memory; share one per
// credential set.
type Client struct {
	tokens TokenSource
	opts   Options
	http   *http.Client

	mu       sync.Mutex
	admins   map[string]adminToken
	sessions map[string]sessionAccess
	flights  singleflight.Group
}

type adminToken struct {
	base, token string
	expires     time.Time
}

// sessionAccess is what polling a session needs: its queue and token.
type sessionAccess struct {
	queueURL, token string
}

// New builds a client.
func New(tokens TokenSource, opts Options) *Client {
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OnCall == nil {
		opts.OnCall = func(string, int) {}
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.RegistrationRetryBase <= 0 {
		opts.RegistrationRetryBase = time.Second
	}
	// No client timeout: a message poll is held for about 50 s; each call's
	// context bounds it.
	return &Client{tokens: tokens, opts: opts, http: &http.Client{Transport: opts.Transport},
		admins: map[string]adminToken{}, sessions: map[string]sessionAccess{}}
}

// ConfigURL is the scope's configuration URL: the web URL, then the
// organization, owner/repository or enterprises/name.
func (c *Client) ConfigURL(scope github.Scope) string {
	base := strings.TrimSuffix(c.opts.RunnerURL, "/") + "/"
	switch {
	case scope.Repository != "":
		return base + scope.Repository
	case scope.Organization != "":
		return base + scope.Organization
	}
	return base + "enterprises/" + scope.Enterprise
}

// admin returns the scope's admin token and service URL, trading a
// registration token for new ones when none is cached or it expires soon.
func (c *Client) admin(ctx context.Context, scope github.Scope) (adminToken, error) {
	key := scope.String()
	c.mu.Lock()
	a, ok := c.admins[key]
	c.mu.Unlock()
	if ok && c.opts.Now().Add(adminRefreshBefore).Before(a.expires) {
		return a, nil
	}
	v, err, _ := c.flights.Do("admin "+key, func() (any, error) { return c.register(ctx, scope) })
	if err != nil {
		return adminToken{}, err
	}
	return v.(adminToken), nil
}

// forgetAdmin drops a refused admin token, so the next call gets a new one.
func (c *Client) forgetAdmin(scope github.Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.admins, scope.String())
}

// register trades a registration token for the scope's admin token and
// service URL. The service's 401 and 403 here can be transient (GitHub's
// clients retry them too), so they are retried with backoff, as are 429, 5xx
// and transport errors.
func (c *Client) register(ctx context.Context, scope github.Scope) (adminToken, error) {
	wait := c.opts.RegistrationRetryBase
	for attempt := 1; ; attempt++ {
		a, err := c.registerOnce(ctx, scope)
		status := StatusOf(err)
		transient := Retryable(err) || status == http.StatusUnauthorized || status == http.StatusForbidden
		if err == nil || !transient || attempt == registrationAttempts {
			return a, err
		}
		select {
		case <-ctx.Done():
			return adminToken{}, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (c *Client) registerOnce(ctx context.Context, scope github.Scope) (adminToken, error) {
	reg, err := c.tokens.RegistrationToken(ctx, scope)
	if err != nil {
		return adminToken{}, fmt.Errorf("scaleset: registration token for %s: %w", scope, err)
	}
	body, _ := json.Marshal(map[string]string{"url": c.ConfigURL(scope), "runner_event": "register"})
	endpoint := strings.TrimSuffix(c.opts.APIBaseURL, "/") + "/actions/runner-registration"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return adminToken{}, fmt.Errorf("scaleset: runner registration: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "RemoteAuth "+reg.Value())
	req.Header.Set("User-Agent", c.userAgent(0))
	var out struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := c.do(req, "runner registration", &out); err != nil {
		return adminToken{}, err
	}
	if out.URL == "" || out.Token == "" {
		return adminToken{}, fmt.Errorf("scaleset: runner registration: the answer has no service URL or token")
	}
	expires, err := jwtExpiry(out.Token)
	if err != nil {
		return adminToken{}, fmt.Errorf("scaleset: runner registration: the admin token: %w", err)
	}
	a := adminToken{base: strings.TrimSuffix(out.URL, "/") + "/", token: out.Token, expires: expires}
	c.mu.Lock()
	c.admins[scope.String()] = a
	c.mu.Unlock()
	return a, nil
}

// userAgent names arcflow, its version and, for a set's calls, the set, as
// GitHub's own clients do: GitHub's logs tell listeners apart by it.
func (c *Client) userAgent(setID int64) string {
	ua := "arcflow/" + c.opts.Version
	if setID != 0 {
		ua += " (scale-set " + strconv.FormatInt(setID, 10) + ")"
	}
	return ua
}

// jwtExpiry reads a JWT's exp claim without verifying the token: the client
// only needs to know when to replace it.
func jwtExpiry(token string) (time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, fmt.Errorf("not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, fmt.Errorf("claims are not base64url: %w", err)
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.Exp == 0 {
		return time.Time{}, fmt.Errorf("no exp claim")
	}
	return time.Unix(claims.Exp, 0), nil
}

// call makes an Actions service call with the scope's admin token: path is
// relative to the service's URL, setID the set it is about (0: none). A 401
// gets one retry with a new admin token.
func (c *Client) call(ctx context.Context, scope github.Scope, setID int64, op, method, path string, in, out any) error {
	for attempt := 0; ; attempt++ {
		a, err := c.admin(ctx, scope)
		if err != nil {
			return err
		}
		req, err := c.request(ctx, method, serviceURL(a.base+path), a.token, setID, in)
		if err != nil {
			return fmt.Errorf("scaleset: %s: %w", op, err)
		}
		err = c.do(req, op, out)
		if attempt == 0 && isStatus(err, http.StatusUnauthorized) {
			c.forgetAdmin(scope)
			continue
		}
		return err
	}
}

// serviceURL adds the API version to a service call's query, as every call
// but the message queue's carries it.
func serviceURL(target string) string {
	if strings.Contains(target, "?") {
		return target + "&" + apiVersion
	}
	return target + "?" + apiVersion
}

// request builds a call to target as given: in goes as JSON; the API version
// goes in the Accept header.
func (c *Client) request(ctx context.Context, method, target, token string, setID int64, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json; "+apiVersion)
	req.Header.Set("User-Agent", c.userAgent(setID))
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends req and decodes a 2xx JSON answer into out (skipping a UTF-8 BOM;
// an empty body leaves out as it is). Any other answer is a *ServiceError.
func (c *Client) do(req *http.Request, op string, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		c.opts.OnCall(op, 0)
		// The URL may name a session; the error names only the operation.
		return fmt.Errorf("scaleset: %s: %w", op, unwrapURLError(err))
	}
	defer resp.Body.Close()
	c.opts.OnCall(op, resp.StatusCode)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("scaleset: %s: read the answer: %w", op, err)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return serviceError(op, resp, raw)
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("scaleset: %s: decode the answer: %w", op, err)
	}
	return nil
}

func serviceError(op string, resp *http.Response, raw []byte) error {
	e := &ServiceError{Op: op, Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header),
		ActivityID: resp.Header.Get("ActivityId"), RequestID: resp.Header.Get("X-GitHub-Request-Id")}
	var body struct {
		TypeName string `json:"typeName"`
		Message  string `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil && (body.TypeName != "" || body.Message != "") {
		e.TypeName, e.Message = body.TypeName, body.Message
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200]
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

func isStatus(err error, status int) bool {
	var se *ServiceError
	return errors.As(err, &se) && se.Status == status
}

// unwrapURLError drops *url.Error's wrapping, whose text holds the URL (and
// a session's queue URL is not for logs).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
