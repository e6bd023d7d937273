package github

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// ARC's keys of a githubAPICredentialsFrom Secret (github_upload_url is
// accepted and unused: arcflow uploads nothing).
var secretKeys = map[string]bool{
	"github_token": true, "github_app_id": true, "github_app_installation_id": true, "github_app_private_key": true,
	"github_url": true, "github_upload_url": true, "github_enterprise_url": true, "github_runner_url": true,
}

// ConfigFromSecret reads a githubAPICredentialsFrom Secret's data with ARC's
// keys. A Secret that names no URL keeps inherit's (the worker's), so a
// per-organization token works against the worker's GitHub Enterprise Server or
// proxy, as in ARC. Errors name keys, never values.
func ConfigFromSecret(data map[string][]byte, inherit Config) (Config, error) {
	c := Config{
		Token:           string(data["github_token"]),
		AppPrivateKey:   string(data["github_app_private_key"]),
		URL:             string(data["github_url"]),
		EnterpriseURL:   string(data["github_enterprise_url"]),
		RunnerGitHubURL: string(data["github_runner_url"]),
	}
	var errs []error
	for key, dst := range map[string]*int64{"github_app_id": &c.AppID, "github_app_installation_id": &c.AppInstallationID} {
		if v, ok := data[key]; ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("key %s must be a number", key))
			}
			*dst = n
		}
	}
	var unknown []string
	for key := range data {
		if !secretKeys[key] {
			unknown = append(unknown, key)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 && c.Token == "" && c.AppID == 0 {
		errs = append(errs, fmt.Errorf("no github_token or github_app_* key (found %v)", unknown))
	}
	if c.URL == "" && c.EnterpriseURL == "" {
		c.URL, c.EnterpriseURL = inherit.URL, inherit.EnterpriseURL
		if c.RunnerGitHubURL == "" {
			c.RunnerGitHubURL = inherit.RunnerGitHubURL
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%w (keys github_token, or github_app_id, github_app_installation_id and github_app_private_key)", err)
	}
	return c, nil
}
