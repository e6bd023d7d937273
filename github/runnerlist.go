package github

import (
	"context"
	"sync"
	"time"
)

// DefaultRunnerListInterval is how old the shared list of a scope's runners
// may be when a runner looks itself up or a pool asks which runners are busy.
// Registration is not on a job's critical path (GitHub hands a job to a runner
// as soon as it registers; arcflow only counts it), and a stale busy flag only
// orders a pool's choice of runners to stop (RemoveRunner's 422 keeps a busy
// one), so 10 s costs nothing a job waits on: at most one list call per scope
// per 10 s while anything waits, shared by every runner and pool of the scope,
// and none when nothing does.
const DefaultRunnerListInterval = 10 * time.Second

// runnerLists holds the last list of each scope's runners this process read.
type runnerLists struct {
	mu      sync.Mutex
	byScope map[string]runnerList
}

type runnerList struct {
	runners []Runner
	at      time.Time
}

// stale reports whether a list is older than maxAge times its pages: a scope
// of 1,000 runners (10 pages) is read a tenth as often as one of 100, so a
// scope costs about as many calls an hour whatever its size, and its
// registrations are seen later instead.
func (l runnerList) stale(now time.Time, maxAge time.Duration) bool {
	pages := max(1, (len(l.runners)+runnersPerPage-1)/runnersPerPage)
	return now.Sub(l.at) > maxAge*time.Duration(pages)
}

// Runners returns the scope's runners as listed at most maxAge ago (times the
// list's pages, see runnerList.stale). An older
// list is read again, revalidated (a 304 when nothing changed), once for all
// the callers that wait on it. While the call budget is low (Throttled), a list
// of any age is served instead, and the refresh is counted as deferred.
func (c *Client) Runners(ctx context.Context, scope Scope, maxAge time.Duration) ([]Runner, error) {
	key := scope.String()
	if list, ok := c.cachedRunners(key); ok && (!list.stale(c.now(), maxAge) || c.Throttled()) {
		if list.stale(c.now(), maxAge) {
			c.metrics.Deferred.WithLabelValues(c.config.CredentialName(), "list-runners").Inc()
		}
		return list.runners, nil
	}
	v, err, _ := c.listFlights.Do(key, func() (any, error) {
		if list, ok := c.cachedRunners(key); ok && !list.stale(c.now(), maxAge) {
			return list.runners, nil // refreshed while this caller queued
		}
		runners, err := c.ListRunners(ctx, scope, true)
		if err != nil {
			return nil, err
		}
		c.noteListRead(ctx)
		c.lists.mu.Lock()
		c.lists.byScope[key] = runnerList{runners: runners, at: c.now()}
		c.lists.mu.Unlock()
		return runners, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]Runner), nil
}

func (c *Client) cachedRunners(key string) (runnerList, bool) {
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	list, ok := c.lists.byScope[key]
	return list, ok
}

// SharedRunners is Runners no older than the client's RunnerListInterval.
func (c *Client) SharedRunners(ctx context.Context, scope Scope) ([]Runner, error) {
	return c.Runners(ctx, scope, c.listInterval)
}

// FreshRunners is the scope's runner list read now, whatever the budget; it
// becomes the shared one. It is for the rare reads that must not miss a
// registration or a job that just landed.
func (c *Client) FreshRunners(ctx context.Context, scope Scope) ([]Runner, error) {
	runners, err := c.ListRunners(ctx, scope, true)
	if err != nil {
		return nil, err
	}
	c.noteListRead(ctx)
	c.lists.mu.Lock()
	c.lists.byScope[scope.String()] = runnerList{runners: runners, at: c.now()}
	c.lists.mu.Unlock()
	return runners, nil
}

// FindRunnerFresh looks a runner up in FreshRunners: as after deleting the pod
// of a runner GitHub did not list yet, which would otherwise stay registered.
func (c *Client) FindRunnerFresh(ctx context.Context, scope Scope, name string) (Runner, bool, error) {
	runners, err := c.FreshRunners(ctx, scope)
	if err != nil {
		return Runner{}, false, err
	}
	r, found := named(runners, name)
	return r, found, nil
}

// FindRunner looks a runner up by name in the scope's shared list (Runners, no
// older than the client's RunnerListInterval): a registering runner learns
// that it registered from the list every other runner of the scope reads too,
// never from a list call of its own.
func (c *Client) FindRunner(ctx context.Context, scope Scope, name string) (Runner, bool, error) {
	return c.findIn(ctx, scope, name, c.listInterval)
}

// PatientListFactor is how many runner-list intervals old a list a patient
// registration check accepts (FindRunnerPatient): a minute by default.
const PatientListFactor = 6

// FindRunnerPatient is FindRunner on a list up to PatientListFactor intervals
// old, for a runner whose pool hears from a job's in_progress delivery that it
// registered: the list then only tells of runners that registered and took no
// job yet, for which a minute makes no difference to any job, while checks
// that accept a list one interval old keep the scope's list read every
// interval as long as runners register.
func (c *Client) FindRunnerPatient(ctx context.Context, scope Scope, name string) (Runner, bool, error) {
	return c.findIn(ctx, scope, name, c.listInterval*PatientListFactor)
}

func (c *Client) findIn(ctx context.Context, scope Scope, name string, maxAge time.Duration) (Runner, bool, error) {
	runners, err := c.Runners(ctx, scope, maxAge)
	if err != nil {
		return Runner{}, false, err
	}
	r, found := named(runners, name)
	return r, found, nil
}

func named(runners []Runner, name string) (Runner, bool) {
	for _, r := range runners {
		if r.Name == name {
			return r, true
		}
	}
	return Runner{}, false
}

func (c *Client) noteListRead(ctx context.Context) {
	c.metrics.RunnerListReads.WithLabelValues(c.config.CredentialName(), purposeOf(ctx)).Inc()
}
