package github_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
)

// With GitHub enforcing a small limit (300 calls a window), arcflow plans
// within its share (half): once the window's calls pass 150, deferrable calls
// wait (a list older than the interval is served, the reconcile's run list is
// deferred), while registration tokens and RemoveRunner still go out; after
// the reset the deferred work is done.
func TestTheCallBudgetDefersWhatCanWait(t *testing.T) {
	clk := newClock()
	srv, c, metrics := setup(t, clk)
	srv.EnforceRateLimit(300, time.Hour)
	ctx := context.Background()
	idle := register(t, srv, c, repo, "idle", false)

	for i := 0; !c.Throttled(); i++ {
		require.Less(t, i, 300, "the budget is spent before the limit")
		clk.Advance(github.DefaultRunnerListInterval + time.Second)
		_, err := c.SharedRunners(ctx, repo)
		require.NoError(t, err)
	}
	require.Zero(t, testutil.ToFloat64(metrics.BudgetRemaining.WithLabelValues("pat")))
	calls := len(srv.Calls())
	require.LessOrEqual(t, calls, 155, "about half the limit used")

	register(t, srv, c, repo, "late", false)
	clk.Advance(time.Minute)
	_, found, err := c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.False(t, found, "the stale list is served: registration checks wait for the reset")
	_, _, err = c.OpenRuns(ctx, "octo/app")
	require.ErrorIs(t, err, github.ErrDeferred)
	require.Equal(t, calls, len(srv.Calls()), "nothing deferrable went out ('late' registered with the cached token)")
	require.Positive(t, testutil.ToFloat64(metrics.Deferred.WithLabelValues("pat", "list-runners")))

	_, err = c.RegistrationToken(ctx, github.Scope{Organization: "octo-org"})
	require.NoError(t, err, "registration never waits on the budget")
	require.NoError(t, c.RemoveRunner(ctx, repo, idle.ID), "unregistering never waits on the budget")

	spentAt := clk.Now()
	clk.Advance(time.Hour)
	require.True(t, c.ThrottledSince(spentAt.Add(-time.Second)), "a look that began before the reset still sees the throttling")
	require.False(t, c.ThrottledSince(spentAt), "a look after it does not")
	require.False(t, c.Throttled(), "a new window")
	_, found, err = c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.True(t, found, "the deferred lookup is done once the window reset")
	_, _, err = c.OpenRuns(ctx, "octo/app")
	require.NoError(t, err)
}
