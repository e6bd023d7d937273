package scaleset

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/arcflow/arcflow/github"
)

const setsPath = "_apis/runtime/runnerscalesets"

// DefaultRunnerGroupID is the Default runner group's id.
const DefaultRunnerGroupID = 1

// RunnerGroupID finds a runner group by name; empty or "default" is the
// Default group, without a call.
func (c *Client) RunnerGroupID(ctx context.Context, scope github.Scope, name string) (int64, error) {
	if name == "" || strings.EqualFold(name, "default") {
		return DefaultRunnerGroupID, nil
	}
	var out struct {
		Count int `json:"count"`
		Value []struct {
			ID int64 `json:"id"`
		} `json:"value"`
	}
	if err := c.call(ctx, scope, 0, "find runner group", http.MethodGet, "_apis/runtime/runnergroups/?groupName="+url.QueryEscape(name), nil, &out); err != nil {
		return 0, err
	}
	if out.Count == 0 || len(out.Value) == 0 {
		return 0, fmt.Errorf("scaleset: %s has no runner group named %q", scope, name)
	}
	return out.Value[0].ID, nil
}

type setJSON struct {
	ID            int64  `json:"id,omitempty"`
	Name          string `json:"name"`
	RunnerGroupID int64  `json:"runnerGroupId"`
	Labels        []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"labels"`
	RunnerSetting struct {
		DisableUpdate bool `json:"disableUpdate"`
	} `json:"RunnerSetting"`
}

func (s setJSON) scaleSet() ScaleSet {
	out := ScaleSet{ID: s.ID, Name: s.Name, RunnerGroupID: s.RunnerGroupID, DisableUpdate: s.RunnerSetting.DisableUpdate}
	for _, l := range s.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}

// FindScaleSet looks a set up by runner group and name; ok is false when
// there is none.
func (c *Client) FindScaleSet(ctx context.Context, scope github.Scope, groupID int64, name string) (set ScaleSet, ok bool, err error) {
	var out struct {
		Count int       `json:"count"`
		Value []setJSON `json:"value"`
	}
	path := fmt.Sprintf("%s?runnerGroupId=%d&name=%s", setsPath, groupID, url.QueryEscape(name))
	if err := c.call(ctx, scope, 0, "find scale set", http.MethodGet, path, nil, &out); err != nil {
		return ScaleSet{}, false, err
	}
	if out.Count == 0 || len(out.Value) == 0 {
		return ScaleSet{}, false, nil
	}
	return out.Value[0].scaleSet(), true, nil
}

// CreateScaleSet creates a set with its labels (fixed from then on; the name
// is always one of them on the service's side).
func (c *Client) CreateScaleSet(ctx context.Context, scope github.Scope, set ScaleSet) (ScaleSet, error) {
	in := setJSON{Name: set.Name, RunnerGroupID: set.RunnerGroupID}
	for _, l := range set.Labels {
		in.Labels = append(in.Labels, struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}{Name: l, Type: "System"})
	}
	in.RunnerSetting.DisableUpdate = set.DisableUpdate
	var out setJSON
	if err := c.call(ctx, scope, 0, "create scale set", http.MethodPost, setsPath, in, &out); err != nil {
		return ScaleSet{}, err
	}
	if out.ID == 0 {
		return ScaleSet{}, fmt.Errorf("scaleset: create scale set: the answer has no id")
	}
	return out.scaleSet(), nil
}

// GetScaleSet reads a set by id: ErrScaleSetNotFound when it is gone.
func (c *Client) GetScaleSet(ctx context.Context, scope github.Scope, id int64) (ScaleSet, error) {
	var out setJSON
	if err := c.call(ctx, scope, id, "get scale set", http.MethodGet, fmt.Sprintf("%s/%d", setsPath, id), nil, &out); err != nil {
		return ScaleSet{}, err
	}
	return out.scaleSet(), nil
}

// DeleteScaleSet deletes a set; ErrRunnerBusy while a runner of it runs a job.
func (c *Client) DeleteScaleSet(ctx context.Context, scope github.Scope, id int64) error {
	return c.call(ctx, scope, id, "delete scale set", http.MethodDelete, fmt.Sprintf("%s/%d", setsPath, id), nil, nil)
}
