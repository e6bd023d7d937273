package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gogithub "github.com/google/go-github/v88/github"
)

var (
	// ErrConflict is a 409: a runner of that name is registered already.
	ErrConflict = errors.New("github: a runner of that name exists")
	// ErrRefused is a 422 on a request GitHub will not take as it is (an
	// unknown runner group, bad labels).
	ErrRefused = errors.New("github: request refused")
)

// DefaultRunnerGroupID is the ID of every organization's and enterprise's
// Default runner group, and the group of repository runners.
const DefaultRunnerGroupID = 1

// JITRequest asks for a just-in-time runner configuration.
type JITRequest struct {
	// Name is the runner's name; Labels its labels (self-hosted is added).
	Name   string
	Labels []string
	// Group is the runner group's name; empty means the Default group.
	Group string
	// WorkFolder is the runner's work directory; empty means GitHub's _work.
	WorkFolder string
}

// JITConfig is a registered runner and the configuration it starts from. The
// encoded configuration is a credential: it formats as [redacted].
type JITConfig struct {
	RunnerID int64
	encoded  string
}

// NewJITConfig wraps a configuration another registration path made (a runner
// scale set's generatejitconfig).
func NewJITConfig(runnerID int64, encoded string) JITConfig {
	return JITConfig{RunnerID: runnerID, encoded: encoded}
}

// Encoded returns the configuration itself, for writing into a Kubernetes Secret.
func (c JITConfig) Encoded() string { return c.encoded }

func (c JITConfig) String() string {
	return fmt.Sprintf("JITConfig{RunnerID:%d, [redacted]}", c.RunnerID)
}
func (c JITConfig) GoString() string { return c.String() }

// GenerateJITConfig registers a runner in one call and returns its configuration
// (GitHub's generate-jitconfig): no registration token, no wait for the runner
// to show in a list. It returns ErrConflict when the name is taken, ErrRefused
// on a 422, and *RateLimitError. It is not idempotent: a second call for the
// same name conflicts.
func (c *Client) GenerateJITConfig(ctx context.Context, scope Scope, in JITRequest) (JITConfig, error) {
	if err := scope.Validate(); err != nil {
		return JITConfig{}, err
	}
	groupID, err := c.runnerGroupID(ctx, scope, in.Group)
	if err != nil {
		return JITConfig{}, err
	}
	const endpoint = "generate-jitconfig"
	ctx = withEndpoint(ctx, endpoint)
	req := &gogithub.GenerateJITConfigRequest{Name: in.Name, RunnerGroupID: groupID, Labels: withSelfHosted(in.Labels)}
	if in.WorkFolder != "" {
		req.WorkFolder = &in.WorkFolder
	}
	var (
		out  *gogithub.JITRunnerConfig
		resp *gogithub.Response
	)
	switch {
	case scope.Repository != "":
		owner, repo := ownerRepo(scope)
		out, resp, err = c.gh.Actions.GenerateRepoJITConfig(ctx, owner, repo, req)
	case scope.Organization != "":
		out, resp, err = c.gh.Actions.GenerateOrgJITConfig(ctx, scope.Organization, req)
	default:
		out, resp, err = c.gh.Enterprise.GenerateEnterpriseJITConfig(ctx, scope.Enterprise, req)
	}
	what := fmt.Sprintf("%s %s for %s", endpoint, scope, in.Name)
	if resp != nil && err != nil {
		switch resp.StatusCode {
		case http.StatusConflict:
			return JITConfig{}, fmt.Errorf("%s: %w", what, ErrConflict)
		case http.StatusUnprocessableEntity:
			return JITConfig{}, fmt.Errorf("%s: %w: %w", what, ErrRefused, err)
		}
	}
	if err := classify(what, resp, err, c.now()); err != nil {
		return JITConfig{}, err
	}
	if out.GetEncodedJITConfig() == "" || out.GetRunner().GetID() == 0 {
		return JITConfig{}, fmt.Errorf("%s: the response holds no runner or configuration", what)
	}
	return JITConfig{RunnerID: out.GetRunner().GetID(), encoded: out.GetEncodedJITConfig()}, nil
}

func withSelfHosted(labels []string) []string {
	out := []string{"self-hosted"}
	for _, l := range labels {
		if !strings.EqualFold(l, "self-hosted") {
			out = append(out, l)
		}
	}
	return out
}

// runnerGroupID finds a runner group's ID by name through the HTTP cache.
// Repository runners have no groups.
func (c *Client) runnerGroupID(ctx context.Context, scope Scope, name string) (int64, error) {
	if name == "" {
		return DefaultRunnerGroupID, nil
	}
	if scope.Repository != "" {
		return 0, fmt.Errorf("runner group %q: repository runners belong to no group", name)
	}
	const endpoint = "list-runner-groups"
	ctx = withEndpoint(ctx, endpoint)
	for page := 1; page != 0; {
		var (
			groups []*gogithub.RunnerGroup
			resp   *gogithub.Response
			err    error
		)
		opts := gogithub.ListOptions{Page: page, PerPage: 100}
		if scope.Organization != "" {
			var list *gogithub.RunnerGroups
			list, resp, err = c.gh.Actions.ListOrganizationRunnerGroups(ctx, scope.Organization, &gogithub.ListOrgRunnerGroupOptions{ListOptions: opts})
			groups = list.GetRunnerGroups()
		} else {
			var list *gogithub.EnterpriseRunnerGroups
			list, resp, err = c.gh.Enterprise.ListRunnerGroups(ctx, scope.Enterprise, &gogithub.ListEnterpriseRunnerGroupOptions{ListOptions: opts})
			for _, g := range list.GetRunnerGroups() {
				groups = append(groups, &gogithub.RunnerGroup{ID: g.ID, Name: g.Name})
			}
		}
		if err := classify(endpoint+" "+scope.String(), resp, err, c.now()); err != nil {
			return 0, err
		}
		for _, g := range groups {
			if g.GetName() == name {
				return g.GetID(), nil
			}
		}
		page = resp.NextPage
	}
	return 0, fmt.Errorf("runner group %q of %s: %w", name, scope, ErrNotFound)
}
