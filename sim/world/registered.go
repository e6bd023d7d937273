package world

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// RegisterIdleRunners registers n runners in a repository of the fake GitHub,
// as a large organization's scope holds runners arcflow does not manage
// (other pools, other tools): labelled so no job of the load fits them, online
// and idle. They make each list of the scope's runners n/100 pages longer.
func RegisterIdleRunners(gh *fakegithub.Server, repository string, n int) error {
	req, err := http.NewRequest(http.MethodPost, gh.URL+"repos/"+repository+"/actions/runners/registration-token", nil)
	if err != nil {
		return fmt.Errorf("registration token request: %w", err)
	}
	req.Header.Set("Authorization", "token ghp_simulated")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("registration token: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Token == "" {
		return fmt.Errorf("registration token: status %d, %v", resp.StatusCode, err)
	}
	for i := range n {
		if _, err := gh.Register(body.Token, fmt.Sprintf("unmanaged-%04d", i), []string{"self-hosted", "unmanaged"}, false); err != nil {
			return fmt.Errorf("register unmanaged runner %d: %w", i, err)
		}
	}
	return nil
}
