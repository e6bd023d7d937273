package activities_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// scaleSetActivities runs the scale set activities against a fake GitHub over
// HTTP, with a set made by the real client.
func scaleSetActivities(t *testing.T) (*fakegithub.Server, *activities.ScaleSets, calls.ScaleSetRef, *testsuite.TestActivityEnvironment) {
	t.Helper()
	fake, err := fakegithub.New(fakegithub.Options{Actions: fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fake.Close() })
	gh, err := github.New(github.Config{Token: "pat", URL: fake.URL}, github.Options{})
	require.NoError(t, err)
	client := scaleset.New(gh, scaleset.Options{APIBaseURL: fake.URL, RunnerURL: "https://github.com/"})
	scope := github.Scope{Organization: "octo"}
	set, err := client.CreateScaleSet(context.Background(), scope, scaleset.ScaleSet{Name: "arc", RunnerGroupID: 1, Labels: []string{"arc"}})
	require.NoError(t, err)
	sets := &activities.ScaleSets{
		Clients:       func(context.Context, github.Scope) (*scaleset.Client, error) { return client, nil },
		ConflictRetry: 20 * time.Millisecond,
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(sets)
	return fake, sets, calls.ScaleSetRef{Scope: scope, ID: set.ID}, env
}

// A set another session holds is taken as soon as that session lets go, by
// the open that waits out the conflict; without the wait, the conflict and
// who holds the set are the outcome at once.
func TestAnOpenWaitsOutAnotherSession(t *testing.T) {
	fake, sets, ref, env := scaleSetActivities(t)
	require.NoError(t, fake.HoldSetBy(ref.ID, "arc-listener", 300*time.Millisecond))

	v, err := env.ExecuteActivity(sets.OpenScaleSetSession, calls.OpenScaleSetSessionInput{Set: ref, Owner: "arcflow"})
	require.NoError(t, err)
	var out calls.OpenScaleSetSessionOutput
	require.NoError(t, v.Get(&out))
	require.True(t, out.Conflict)
	require.Contains(t, out.Holder, "arc-listener", "the service's word names the holder")

	v, err = env.ExecuteActivity(sets.OpenScaleSetSession, calls.OpenScaleSetSessionInput{Set: ref, Owner: "arcflow", WaitOnConflict: 10 * time.Second})
	require.NoError(t, err)
	out = calls.OpenScaleSetSessionOutput{}
	require.NoError(t, v.Get(&out))
	require.False(t, out.Conflict)
	require.NotEmpty(t, out.SessionID)
}

// A session lost to the service is deleted before the next is opened, and a
// DELETE the service answers with SessionExpired is no error.
func TestAnOpenDeletesTheLostSessionFirst(t *testing.T) {
	fake, sets, ref, env := scaleSetActivities(t)
	v, err := env.ExecuteActivity(sets.OpenScaleSetSession, calls.OpenScaleSetSessionInput{Set: ref, Owner: "arcflow"})
	require.NoError(t, err)
	var first calls.OpenScaleSetSessionOutput
	require.NoError(t, v.Get(&first))
	require.NoError(t, fake.ExpireSession(ref.ID))

	v, err = env.ExecuteActivity(sets.OpenScaleSetSession, calls.OpenScaleSetSessionInput{Set: ref, Owner: "arcflow", Stale: first.SessionID})
	require.NoError(t, err)
	var second calls.OpenScaleSetSessionOutput
	require.NoError(t, v.Get(&second))
	require.NotEmpty(t, second.SessionID)
	require.Equal(t, 1, fake.CallCounts()["DELETE /actions-service/_apis/runtime/runnerscalesets/{id}/sessions/{sid}"], "the lost session's DELETE")
}
