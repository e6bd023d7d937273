package fakegithub_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

func TestAssignQueuedHandsJobsOnlyToRunnersThatFit(t *testing.T) {
	srv, c := newClient(t)
	var mu sync.Mutex
	var events []fakegithub.JobEvent
	srv.OnJobEvent(func(e fakegithub.JobEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	})
	repoToken, _, err := c.Actions.CreateRegistrationToken(context.Background(), "octo", "app")
	require.NoError(t, err)
	orgToken, _, err := c.Actions.CreateOrganizationRegistrationToken(context.Background(), "other")
	require.NoError(t, err)
	_, err = srv.Register(repoToken.GetToken(), "gpu", []string{"GPU"}, true)
	require.NoError(t, err)
	_, err = srv.Register(orgToken.GetToken(), "org", []string{"gpu"}, true)
	require.NoError(t, err)

	gpuJob := srv.QueueJob("octo/app", "train", []string{"self-hosted", "Linux", "gpu"})
	armJob := srv.QueueJob("octo/app", "arm", []string{"self-hosted", "arm64"})
	started := srv.AssignQueued(rand.New(rand.NewPCG(1, 2)))

	require.Len(t, started, 1, "the arm job fits no runner; the org runner is another owner's")
	require.Equal(t, gpuJob.ID, started[0].ID)
	require.Equal(t, "gpu", started[0].RunnerName, "labels match case-insensitively")
	r, _ := srv.Runner("gpu")
	require.True(t, r.Busy)

	// A busy runner takes nothing more.
	srv.QueueJob("octo/app", "train-2", []string{"gpu"})
	require.Empty(t, srv.AssignQueued(rand.New(rand.NewPCG(1, 2))))

	done, err := srv.CompleteJob(gpuJob.ID, "success")
	require.NoError(t, err)
	require.False(t, done.CompletedAt.IsZero())
	_, stillThere := srv.Runner("gpu")
	require.False(t, stillThere, "an ephemeral runner is removed after its job")

	mu.Lock()
	defer mu.Unlock()
	var actions []string
	for _, e := range events {
		actions = append(actions, e.Action)
	}
	require.Equal(t, []string{"queued", "queued", "in_progress", "queued", "completed"}, actions)
	require.Equal(t, "gpu", events[2].Runner.Name)
	require.Equal(t, armJob.ID, events[1].Job.ID)
}

func TestAssignQueuedSpreadsJobsOverIdleRunners(t *testing.T) {
	srv, c := newClient(t)
	tok, _, err := c.Actions.CreateRegistrationToken(context.Background(), "octo", "app")
	require.NoError(t, err)
	for _, name := range []string{"a", "b", "c"} {
		_, err = srv.Register(tok.GetToken(), name, nil, false)
		require.NoError(t, err)
	}
	for range 5 {
		srv.QueueJob("octo/app", "j", []string{"self-hosted"})
	}
	started := srv.AssignQueued(rand.New(rand.NewPCG(7, 7)))
	require.Len(t, started, 3, "three idle runners take three of five jobs")
	names := map[string]bool{}
	for _, j := range started {
		names[j.RunnerName] = true
	}
	require.Len(t, names, 3)
}
