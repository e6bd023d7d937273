package github_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
)

func listCalls(calls map[string]int) int { return calls[listRepoRunners] }

// Registering runners learn that they registered from one shared list per
// scope: a hundred lookups within the interval cost one list call, and a new
// registration is seen once the list is older than the interval.
func TestFindRunnerReadsOneSharedListPerInterval(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()
	for i := range 100 {
		_, found, err := c.FindRunner(ctx, repo, fmt.Sprintf("runner-%d", i))
		require.NoError(t, err)
		require.False(t, found)
	}
	require.Equal(t, 1, listCalls(srv.CallCounts()), "one list for a hundred lookups")

	info := register(t, srv, c, repo, "late", false)
	_, found, err := c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.False(t, found, "the shared list is younger than the interval")

	clk.Advance(github.DefaultRunnerListInterval + time.Second)
	got, found, err := c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.True(t, found, "seen once the list is read again")
	require.Equal(t, info.ID, got.ID)
	require.Equal(t, "online", got.Status)
	require.Equal(t, 2, listCalls(srv.CallCounts()))
}

// Lookups that wait on an old list at once share one refresh.
func TestConcurrentLookupsShareOneRefresh(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()
	_, err := c.Runners(ctx, repo, time.Minute)
	require.NoError(t, err)
	clk.Advance(time.Hour)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := c.FindRunner(ctx, repo, fmt.Sprintf("r-%d", i))
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Equal(t, 2, listCalls(srv.CallCounts()), "the first list, then one refresh for all the waiters")
}

// A scope of many runners is read less often, in proportion to its pages, so
// its calls an hour do not grow with its size.
func TestALargeScopeIsReadInProportionToItsPages(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()
	for i := range 250 { // three pages
		register(t, srv, c, repo, fmt.Sprintf("idle-%03d", i), false)
	}
	_, err := c.SharedRunners(ctx, repo)
	require.NoError(t, err)
	require.Equal(t, 3, listCalls(srv.CallCounts()), "one read: three pages")
	clk.Advance(2 * github.DefaultRunnerListInterval)
	_, _, err = c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.Equal(t, 3, listCalls(srv.CallCounts()), "two intervals later a three-page list is still fresh")
	clk.Advance(github.DefaultRunnerListInterval + time.Second)
	_, _, err = c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.Equal(t, 6, listCalls(srv.CallCounts()), "read again after three intervals")
}

// The check after deleting the pod of a runner not listed yet reads the list
// now: a registration that landed meanwhile must not be left behind.
func TestFindRunnerFreshSeesARegistrationTheSharedListMisses(t *testing.T) {
	clk := newClock()
	srv, c, _ := setup(t, clk)
	ctx := context.Background()
	_, found, err := c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.False(t, found)
	register(t, srv, c, repo, "late", true)
	_, found, err = c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.False(t, found, "the shared list is younger than the interval")
	_, found, err = c.FindRunnerFresh(ctx, repo, "late")
	require.NoError(t, err)
	require.True(t, found)
	_, found, err = c.FindRunner(ctx, repo, "late")
	require.NoError(t, err)
	require.True(t, found, "the fresh list became the shared one")
}

// A patient registration check (a runner whose pool hears its job start from
// a delivery) reads the shared list up to PatientListFactor intervals old:
// while others read it every interval it sees their reads, and alone it reads
// the scope's list once a minute.
func TestFindRunnerPatientAcceptsAnOlderList(t *testing.T) {
	clk := newClock()
	srv, c, metrics := setup(t, clk)
	ctx := github.WithPurpose(context.Background(), "patient-registration")
	_, _, err := c.FindRunnerPatient(ctx, repo, "late")
	require.NoError(t, err)
	register(t, srv, c, repo, "late", false)
	clk.Advance(github.DefaultRunnerListInterval + time.Second)
	_, found, err := c.FindRunnerPatient(ctx, repo, "late")
	require.NoError(t, err)
	require.False(t, found, "a list one interval old is young enough")
	require.Equal(t, 1, listCalls(srv.CallCounts()))

	clk.Advance(github.PatientListFactor * github.DefaultRunnerListInterval)
	_, found, err = c.FindRunnerPatient(ctx, repo, "late")
	require.NoError(t, err)
	require.True(t, found, "read again once the list is older than the factor")
	require.Equal(t, 2, listCalls(srv.CallCounts()))
	require.Equal(t, 2.0, testutil.ToFloat64(metrics.RunnerListReads.WithLabelValues("pat", "patient-registration")),
		"each read that called GitHub counted under its purpose")
}
