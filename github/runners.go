package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	gogithub "github.com/google/go-github/v88/github"
)

type (
	gogithubRegistrationToken = gogithub.RegistrationToken
	gogithubResponse          = gogithub.Response
)

// runnersPerPage is the page size of runner lists, GitHub's largest.
const runnersPerPage = 100

// ListRunners lists every runner of a scope, 100 a page. Pages come from the HTTP
// cache while GitHub's max-age holds; fresh forces a revalidation, which costs a
// request but, when nothing changed, only a 304.
func (c *Client) ListRunners(ctx context.Context, scope Scope, fresh bool) ([]Runner, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	const endpoint = "list-runners"
	ctx = withEndpoint(ctx, endpoint)
	var runners []Runner
	for page := 1; ; {
		u := fmt.Sprintf("%s/actions/runners?per_page=%d&page=%d", scope.String(), runnersPerPage, page)
		req, err := c.gh.NewRequest(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", endpoint, scope, err)
		}
		if fresh {
			req.Header.Set("Cache-Control", "max-age=0")
		}
		var list gogithub.Runners
		resp, err := c.doReadAll(req, &list)
		if err := classify(endpoint+" "+scope.String(), resp, err, c.now()); err != nil {
			return nil, err
		}
		for _, r := range list.Runners {
			runner := Runner{ID: r.GetID(), Name: r.GetName(), Status: r.GetStatus(), Busy: r.GetBusy()}
			for _, l := range r.Labels {
				runner.Labels = append(runner.Labels, l.GetName())
			}
			runners = append(runners, runner)
		}
		if resp.NextPage == 0 {
			return runners, nil
		}
		page = resp.NextPage
	}
}

// RemoveRunner unregisters a runner. It returns ErrRunnerBusy (422) while the
// runner runs a job, ErrNotFound when it is already gone, and *RateLimitError.
func (c *Client) RemoveRunner(ctx context.Context, scope Scope, id int64) error {
	if err := scope.Validate(); err != nil {
		return err
	}
	const endpoint = "remove-runner"
	ctx = withEndpoint(ctx, endpoint)
	var (
		resp *gogithub.Response
		err  error
	)
	switch {
	case scope.Repository != "":
		owner, repo := ownerRepo(scope)
		resp, err = c.gh.Actions.RemoveRunner(ctx, owner, repo, id)
	case scope.Organization != "":
		resp, err = c.gh.Actions.RemoveOrganizationRunner(ctx, scope.Organization, id)
	default:
		resp, err = c.gh.Enterprise.RemoveRunner(ctx, scope.Enterprise, id)
	}
	return classify(fmt.Sprintf("%s %s/%d", endpoint, scope, id), resp, err, c.now())
}

// doReadAll sends a request and reads the body to its end before decoding: the
// HTTP cache stores a response only once its body hit EOF, which a streaming JSON
// decoder does not always reach.
func (c *Client) doReadAll(req *http.Request, v any) (*gogithub.Response, error) {
	resp, err := c.gh.BareDo(req)
	if err != nil {
		return resp, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp, fmt.Errorf("read response: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return resp, fmt.Errorf("decode response: %w", err)
	}
	return resp, nil
}
