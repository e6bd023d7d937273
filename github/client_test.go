package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

const (
	listRepoRunners   = "GET /repos/{owner}/{repo}/actions/runners"
	repoTokenEndpoint = "POST /repos/{owner}/{repo}/actions/runners/registration-token"
)

var repo = github.Scope{Repository: "octo/app"}

// clock is a settable time source shared by the fake and the client.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func setup(t *testing.T, clk *clock) (*fakegithub.Server, *github.Client, *github.Metrics) {
	t.Helper()
	now := time.Now
	if clk != nil {
		now = clk.Now
	}
	srv, err := fakegithub.New(fakegithub.Options{Now: now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	metrics := github.NewMetrics(prometheus.NewRegistry())
	c, err := github.New(github.Config{Token: "ghp_test", URL: srv.URL}, github.Options{Metrics: metrics, Now: now})
	require.NoError(t, err)
	return srv, c, metrics
}

func register(t *testing.T, srv *fakegithub.Server, c *github.Client, scope github.Scope, name string, ephemeral bool) fakegithub.RunnerInfo {
	t.Helper()
	tok, err := c.RegistrationToken(context.Background(), scope)
	require.NoError(t, err)
	info, err := srv.Register(tok.Value(), name, []string{"linux"}, ephemeral)
	require.NoError(t, err)
	return info
}

func TestRegistrationTokenIsReusedWhileMoreThan30MinutesRemain(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()

	first, err := c.RegistrationToken(ctx, repo)
	require.NoError(t, err)
	clk.Advance(29 * time.Minute) // 31 minutes left
	second, err := c.RegistrationToken(ctx, repo)
	require.NoError(t, err)
	require.Equal(t, first.Value(), second.Value())
	require.Equal(t, 1, srv.CallCounts()[repoTokenEndpoint])

	clk.Advance(2 * time.Minute) // 29 minutes left: too little for a runner to start
	third, err := c.RegistrationToken(ctx, repo)
	require.NoError(t, err)
	require.NotEqual(t, first.Value(), third.Value())
	require.Equal(t, 2, srv.CallCounts()[repoTokenEndpoint])

	org, err := c.RegistrationToken(ctx, github.Scope{Organization: "octo"})
	require.NoError(t, err)
	require.NotEqual(t, third.Value(), org.Value(), "tokens are cached per scope")
}

func TestConcurrentTokenRequestsShareOneCall(t *testing.T) {
	srv, c, _ := setup(t, nil)
	srv.SetLatency(100 * time.Millisecond) // keep the first request in flight
	var wg sync.WaitGroup
	tokens := make([]string, 20)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := c.RegistrationToken(context.Background(), repo)
			require.NoError(t, err)
			tokens[i] = tok.Value()
		}()
	}
	wg.Wait()
	require.Equal(t, 1, srv.CallCounts()[repoTokenEndpoint])
	for _, tok := range tokens {
		require.Equal(t, tokens[0], tok)
	}
}

func TestRegistrationTokenNeverFormatsItsValue(t *testing.T) {
	_, c, _ := setup(t, nil)
	tok, err := c.RegistrationToken(context.Background(), repo)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, tok)} {
		require.NotContains(t, s, tok.Value())
	}
}

func TestARunnerRegistersOnlyWithAnIssuedToken(t *testing.T) {
	srv, _, _ := setup(t, nil)
	_, err := srv.Register("AFAKEnever-issued", "r1", nil, true)
	require.ErrorIs(t, err, fakegithub.ErrUnknownToken)
	require.Empty(t, srv.Runners())
}

func TestListRunnersIsCachedAndRevalidatedWithETags(t *testing.T) {
	srv, c, metrics := setup(t, nil)
	ctx := context.Background()
	for i := range 250 {
		register(t, srv, c, repo, fmt.Sprintf("runner-%03d", i), true)
	}

	runners, err := c.ListRunners(ctx, repo, false)
	require.NoError(t, err)
	require.Len(t, runners, 250, "three pages of 100")
	require.Equal(t, 3, srv.CallCounts()[listRepoRunners])

	// Within max-age every page comes from the cache: no call at all.
	_, err = c.ListRunners(ctx, repo, false)
	require.NoError(t, err)
	require.Equal(t, 3, srv.CallCounts()[listRepoRunners])

	// Revalidation sends If-None-Match; unchanged pages cost a 304 each.
	_, err = c.ListRunners(ctx, repo, true)
	require.NoError(t, err)
	var notModified int
	for _, call := range srv.Calls() {
		if call.Endpoint == listRepoRunners && call.Status == 304 {
			notModified++
		}
	}
	require.Equal(t, 3, notModified)
	require.Equal(t, 3.0, testutil.ToFloat64(metrics.Calls.WithLabelValues("pat", "list-runners", "304")))
	require.Equal(t, 3.0, testutil.ToFloat64(metrics.Calls.WithLabelValues("pat", "list-runners", "200")))
	require.Equal(t, 5000.0, testutil.ToFloat64(metrics.RateLimit.WithLabelValues("pat")))
	require.Less(t, testutil.ToFloat64(metrics.RateLimitRemaining.WithLabelValues("pat")), 5000.0)
}

func TestRemoveRunner(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	idle := register(t, srv, c, repo, "idle", false)
	busy := register(t, srv, c, repo, "busy", false)
	job := srv.QueueJob("octo/app", "build", []string{"linux"})
	_, err := srv.StartJob(job.ID, "busy")
	require.NoError(t, err)

	require.NoError(t, c.RemoveRunner(ctx, repo, idle.ID))
	_, still := srv.Runner("idle")
	require.False(t, still)

	err = c.RemoveRunner(ctx, repo, busy.ID)
	require.ErrorIs(t, err, github.ErrRunnerBusy)
	_, still = srv.Runner("busy")
	require.True(t, still, "GitHub refuses to remove a busy runner")

	require.ErrorIs(t, c.RemoveRunner(ctx, repo, idle.ID), github.ErrNotFound)

	// An ephemeral runner disappears by itself when its job ends.
	eph := register(t, srv, c, repo, "eph", true)
	job2 := srv.QueueJob("octo/app", "test", []string{"linux"})
	_, err = srv.StartJob(job2.ID, eph.Name)
	require.NoError(t, err)
	_, err = srv.CompleteJob(job2.ID, "success")
	require.NoError(t, err)
	_, still = srv.Runner("eph")
	require.False(t, still)
}

func TestRateLimitsBecomeTypedErrorsWithTheResetTime(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	reset := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	srv.RateLimitNext(1, reset)
	err := c.RemoveRunner(ctx, repo, 1)
	var rl *github.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.False(t, rl.Secondary)
	require.True(t, rl.Reset.Equal(reset), "reset %v, want %v", rl.Reset, reset)

	srv2, c2, _ := setup(t, nil)
	srv2.SecondaryRateLimitNext(1, 90*time.Second)
	before := time.Now()
	_, err = c2.RegistrationToken(ctx, repo)
	require.ErrorAs(t, err, &rl)
	require.True(t, rl.Secondary)
	require.WithinDuration(t, before.Add(90*time.Second), rl.Reset, 5*time.Second)
}

func TestServerErrorsAreWrappedWithTheEndpoint(t *testing.T) {
	srv, c, _ := setup(t, nil)
	srv.FailNext(1)
	_, err := c.ListRunners(context.Background(), repo, false)
	require.ErrorContains(t, err, "list-runners repos/octo/app")
	require.ErrorContains(t, err, "502")
}

func TestEnterpriseServerURLsGetAPIv3(t *testing.T) {
	for raw, want := range map[string]string{
		"https://ghes.example.com":         "https://ghes.example.com/api/v3/",
		"https://ghes.example.com/":        "https://ghes.example.com/api/v3/",
		"https://api.ghes.example.com":     "https://api.ghes.example.com/",
		"https://ghes.api.example.com/":    "https://ghes.api.example.com/",
		"https://ghes.example.com/api/v3/": "https://ghes.example.com/api/v3/",
		"https://octo.ghe.com":             "https://api.octo.ghe.com/",
		"https://api.octo.ghe.com/":        "https://api.octo.ghe.com/",
	} {
		cfg := github.Config{Token: "x", EnterpriseURL: raw}
		require.Equal(t, want, cfg.APIBaseURL(), raw)
	}
	require.Equal(t, "https://ghes.example.com/", github.Config{Token: "x", EnterpriseURL: "https://ghes.example.com"}.RunnerURL())
	require.Equal(t, "https://github.com/", github.Config{Token: "x"}.RunnerURL())
	require.Equal(t, "https://octo.ghe.com/", github.Config{Token: "x", EnterpriseURL: "https://octo.ghe.com"}.RunnerURL())
	require.Equal(t, "https://octo.ghe.com/", github.Config{Token: "x", EnterpriseURL: "https://api.octo.ghe.com"}.RunnerURL())

	// The client really talks to a GHES-shaped server under /api/v3/.
	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	defer srv.Close()
	c, err := github.New(github.Config{Token: "x", EnterpriseURL: srv.URL}, github.Options{})
	require.NoError(t, err)
	_, err = c.RegistrationToken(context.Background(), github.Scope{Enterprise: "acme"})
	require.NoError(t, err)
	require.Equal(t, "/api/v3/enterprises/acme/actions/runners/registration-token", srv.Calls()[0].Path)
}

func TestGitHubAppAuthentication(t *testing.T) {
	srv, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	defer srv.Close()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))

	c, err := github.New(github.Config{AppID: 12, AppInstallationID: 34, AppPrivateKey: pemKey, URL: srv.URL}, github.Options{})
	require.NoError(t, err)
	_, err = c.ListRunners(context.Background(), github.Scope{Organization: "octo"}, false)
	require.NoError(t, err)
	endpoints := []string{}
	for _, call := range srv.Calls() {
		endpoints = append(endpoints, call.Endpoint)
	}
	require.Equal(t, []string{"POST /app/installations/{id}/access_tokens", "GET /orgs/{org}/actions/runners"}, endpoints)
}

func TestConfigValidationNamesVariablesNotValues(t *testing.T) {
	for _, tc := range []struct {
		cfg  github.Config
		want string
	}{
		{github.Config{}, "set GITHUB_TOKEN, or GITHUB_APP_ID"},
		{github.Config{Token: "secret-pat", AppID: 1}, "not both"},
		{github.Config{AppID: 1, AppPrivateKey: "secret-key"}, "needs GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID and GITHUB_APP_PRIVATE_KEY"},
		{github.Config{Token: "secret-pat", EnterpriseURL: "ghes"}, "GITHUB_ENTERPRISE_URL must be an absolute URL"},
	} {
		err := tc.cfg.Validate()
		require.ErrorContains(t, err, tc.want)
		require.False(t, strings.Contains(err.Error(), "secret-"), err.Error())
	}
	_, err := github.New(github.Config{AppID: 1, AppInstallationID: 2, AppPrivateKey: "/does/not/exist.pem"}, github.Options{})
	require.ErrorContains(t, err, "read the file named by GITHUB_APP_PRIVATE_KEY")
}
