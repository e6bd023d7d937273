package github_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// A JIT configuration registers the runner at once, offline until the runner
// starts from it; a second request for the name conflicts; the configuration
// never shows in a formatted value.
func TestGenerateJITConfigRegistersTheRunnerInOneCall(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	org := github.Scope{Organization: "octo-org"}

	config, err := c.GenerateJITConfig(ctx, org, github.JITRequest{Name: "jit-1", Labels: []string{"linux", "self-hosted"}})
	require.NoError(t, err)
	require.NotZero(t, config.RunnerID)
	require.NotEmpty(t, config.Encoded())
	for _, formatted := range []string{fmt.Sprint(config), fmt.Sprintf("%+v", config), fmt.Sprintf("%#v", config)} {
		require.NotContains(t, formatted, config.Encoded())
	}
	runner, ok := srv.Runner("jit-1")
	require.True(t, ok, "registered by the call itself")
	require.Equal(t, config.RunnerID, runner.ID)
	require.False(t, runner.Online, "offline until the runner starts")
	require.Equal(t, []string{"linux"}, runner.Labels, "self-hosted once, as GitHub adds it")
	require.Equal(t, 1, srv.CallCounts()["POST /orgs/{org}/actions/runners/generate-jitconfig"], "one call, no token")

	_, err = c.GenerateJITConfig(ctx, org, github.JITRequest{Name: "jit-1", Labels: []string{"linux"}})
	require.ErrorIs(t, err, github.ErrConflict)

	started, err := srv.StartJIT(config.Encoded())
	require.NoError(t, err)
	require.True(t, started.Online)
	_, err = srv.StartJIT(config.Encoded())
	require.ErrorIs(t, err, fakegithub.ErrUnknownToken, "a configuration starts its runner once")
}

func TestJITRunnersJoinTheirRunnerGroupByName(t *testing.T) {
	srv, c, _ := setup(t, nil)
	ctx := context.Background()
	org := github.Scope{Organization: "octo-org"}
	srv.AddRunnerGroup("octo-org", fakegithub.RunnerGroup{Name: "Default", Default: true})
	srv.AddRunnerGroup("octo-org", fakegithub.RunnerGroup{Name: "gpu"})

	_, err := c.GenerateJITConfig(ctx, org, github.JITRequest{Name: "jit-gpu", Labels: []string{"cuda"}, Group: "gpu"})
	require.NoError(t, err)
	runner, _ := srv.Runner("jit-gpu")
	require.Equal(t, "gpu", runner.Group, "the group's ID is looked up by name")
	_, err = c.GenerateJITConfig(ctx, org, github.JITRequest{Name: "jit-default", Labels: []string{"cuda"}})
	require.NoError(t, err)
	runner, _ = srv.Runner("jit-default")
	require.Empty(t, runner.Group, "no group: the Default group, ID 1")

	_, err = c.GenerateJITConfig(ctx, org, github.JITRequest{Name: "jit-x", Labels: []string{"cuda"}, Group: "missing"})
	require.ErrorIs(t, err, github.ErrNotFound)
	_, err = c.GenerateJITConfig(ctx, github.Scope{Repository: "octo-org/app"}, github.JITRequest{Name: "jit-r", Labels: []string{"x"}, Group: "gpu"})
	require.ErrorContains(t, err, "repository runners belong to no group")
}
