package scaleset

import (
	"context"
	"fmt"
	"net/http"

	"github.com/arcflow/arcflow/github"
)

const agentsPath = "_apis/distributedtask/pools/0/agents"

// GenerateJITConfig registers a runner of the set and returns its
// configuration, which only a runner started from it can use: the set's jobs
// go to such runners only. ErrRunnerExists when the name is taken.
func (c *Client) GenerateJITConfig(ctx context.Context, scope github.Scope, setID int64, name, workFolder string) (github.JITConfig, error) {
	if workFolder == "" {
		workFolder = "_work"
	}
	var out struct {
		Runner struct {
			ID int64 `json:"id"`
		} `json:"runner"`
		EncodedJITConfig string `json:"encodedJITConfig"`
	}
	path := fmt.Sprintf("%s/%d/generatejitconfig", setsPath, setID)
	if err := c.call(ctx, scope, setID, "generate jit config", http.MethodPost, path, map[string]string{"name": name, "workFolder": workFolder}, &out); err != nil {
		return github.JITConfig{}, err
	}
	if out.Runner.ID == 0 || out.EncodedJITConfig == "" {
		return github.JITConfig{}, fmt.Errorf("scaleset: generate jit config: the answer has no runner or configuration")
	}
	return github.NewJITConfig(out.Runner.ID, out.EncodedJITConfig), nil
}

// RemoveRunner removes a runner by id: nil also when it is gone already,
// ErrRunnerBusy while it runs a job.
func (c *Client) RemoveRunner(ctx context.Context, scope github.Scope, runnerID int64) error {
	return c.call(ctx, scope, 0, "remove runner", http.MethodDelete, fmt.Sprintf("%s/%d", agentsPath, runnerID), nil, nil)
}
