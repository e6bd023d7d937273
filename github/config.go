package github

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Config holds GitHub credentials and URLs. The environment variable names are
// ARC's, so an ARC Secret mounted as env works unchanged.
type Config struct {
	// Token is a personal access token (GITHUB_TOKEN).
	Token string
	// AppID, AppInstallationID and AppPrivateKey authenticate as a GitHub App
	// (GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID, GITHUB_APP_PRIVATE_KEY). The key is
	// a PEM string or the path of a PEM file.
	AppID             int64
	AppInstallationID int64
	AppPrivateKey     string
	// EnterpriseURL is a GitHub Enterprise Server base URL (GITHUB_ENTERPRISE_URL).
	EnterpriseURL string
	// URL overrides the API URL of github.com, e.g. for a proxy or a fake (GITHUB_URL).
	URL string
	// RunnerGitHubURL overrides the GITHUB_URL given to runners (RUNNER_GITHUB_URL).
	RunnerGitHubURL string
}

// ConfigFromEnv reads ARC's environment variable names.
func ConfigFromEnv() (Config, error) {
	c := Config{
		Token:           os.Getenv("GITHUB_TOKEN"),
		AppPrivateKey:   os.Getenv("GITHUB_APP_PRIVATE_KEY"),
		EnterpriseURL:   os.Getenv("GITHUB_ENTERPRISE_URL"),
		URL:             os.Getenv("GITHUB_URL"),
		RunnerGitHubURL: os.Getenv("RUNNER_GITHUB_URL"),
	}
	var errs []error
	for name, dst := range map[string]*int64{"GITHUB_APP_ID": &c.AppID, "GITHUB_APP_INSTALLATION_ID": &c.AppInstallationID} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s must be a number, not %q", name, v))
			}
			*dst = n
		}
	}
	return c, errors.Join(errs...)
}

// Validate checks that exactly one way to authenticate is complete. Its messages
// name the variables, never their values.
func (c Config) Validate() error {
	app := c.AppID != 0 || c.AppInstallationID != 0 || c.AppPrivateKey != ""
	switch {
	case c.Token != "" && app:
		return errors.New("github config: set GITHUB_TOKEN or the GITHUB_APP_* variables, not both")
	case c.Token == "" && !app:
		return errors.New("github config: set GITHUB_TOKEN, or GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID and GITHUB_APP_PRIVATE_KEY")
	case app && (c.AppID == 0 || c.AppInstallationID == 0 || c.AppPrivateKey == ""):
		return errors.New("github config: a GitHub App needs GITHUB_APP_ID, GITHUB_APP_INSTALLATION_ID and GITHUB_APP_PRIVATE_KEY")
	}
	for name, raw := range map[string]string{"GITHUB_ENTERPRISE_URL": c.EnterpriseURL, "GITHUB_URL": c.URL, "RUNNER_GITHUB_URL": c.RunnerGitHubURL} {
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("github config: %s must be an absolute URL, not %q", name, raw)
		}
	}
	return nil
}

// APIBaseURL is where REST calls go. A GitHub Enterprise Server URL gets /api/v3/
// unless its host already is an API host (api.* or *.api.*), as ARC does; a
// GitHub Enterprise Cloud with data residency (*.ghe.com) has its API at
// api.<host>, as on github.com.
func (c Config) APIBaseURL() string {
	switch {
	case c.EnterpriseURL != "":
		return enterpriseAPIURL(c.EnterpriseURL)
	case c.URL != "":
		return withSlash(c.URL)
	}
	return "https://api.github.com/"
}

// RunnerURL is the GITHUB_URL runners register against: github.com, the Enterprise
// Server's web URL, or RUNNER_GITHUB_URL.
func (c Config) RunnerURL() string {
	switch {
	case c.RunnerGitHubURL != "":
		return withSlash(c.RunnerGitHubURL)
	case c.EnterpriseURL != "":
		web := strings.TrimSuffix(withSlash(c.EnterpriseURL), "api/v3/")
		if u, err := url.Parse(web); err == nil && isGHEDotCom(u.Host) {
			u.Host = strings.TrimPrefix(u.Host, "api.")
			return u.String()
		}
		return web
	}
	return "https://github.com/"
}

// CredentialName identifies the credential set in metrics, without revealing it.
func (c Config) CredentialName() string {
	if c.Token != "" {
		return "pat"
	}
	return "app-" + strconv.FormatInt(c.AppID, 10) + "-" + strconv.FormatInt(c.AppInstallationID, 10)
}

func enterpriseAPIURL(raw string) string {
	base := withSlash(raw)
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	if strings.HasPrefix(u.Host, "api.") || strings.Contains(u.Host, ".api.") || strings.HasSuffix(u.Path, "/api/v3/") {
		return base
	}
	if isGHEDotCom(u.Host) {
		return u.Scheme + "://api." + u.Host + "/"
	}
	return base + "api/v3/"
}

// isGHEDotCom says whether host is a GitHub Enterprise Cloud with data
// residency, whose API is api.<host> (GitHub's own clients treat it as
// github.com is treated).
func isGHEDotCom(host string) bool {
	return strings.HasSuffix(strings.ToLower(host), ".ghe.com")
}

func withSlash(s string) string {
	if strings.HasSuffix(s, "/") {
		return s
	}
	return s + "/"
}
