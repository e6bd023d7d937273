package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// A pool's busy check reads the scope's shared list; a fresh one (a rollout
// choosing which runner to stop) reads the list now, sees a job that just
// started, and leaves that list as the shared one.
func TestRunnerBusyFreshSeesAJobTheSharedListMisses(t *testing.T) {
	srv, client := fakeGitHubClient(t, fakegithub.Options{}, github.Options{RunnerListInterval: time.Hour})
	ctx := context.Background()
	scope := github.Scope{Repository: "octo/app"}
	labels := []string{"self-hosted", "linux"}
	token, err := client.RegistrationToken(ctx, scope)
	require.NoError(t, err)
	_, err = srv.Register(token.Value(), "app-a", labels, true)
	require.NoError(t, err)

	g := &GitHub{Registry: client}
	in := RunnerBusyInput{Scope: scope, Names: []string{"app-a"}}
	busy, err := g.RunnerBusy(ctx, in)
	require.NoError(t, err)
	require.Empty(t, busy, "registered and idle")

	_, err = srv.StartJob(srv.QueueJob("octo/app", "build", labels).ID, "app-a")
	require.NoError(t, err)
	busy, err = g.RunnerBusy(ctx, in)
	require.NoError(t, err)
	require.Empty(t, busy, "the shared list, read within the interval, is not read again")

	in.Fresh = true
	busy, err = g.RunnerBusy(ctx, in)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"app-a": true}, busy)

	in.Fresh = false
	busy, err = g.RunnerBusy(ctx, in)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"app-a": true}, busy, "the fresh list is the shared one now")
	require.Equal(t, 2, srv.CallCounts()["GET /repos/{owner}/{repo}/actions/runners"], "one shared read, one fresh")
}
