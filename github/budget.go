package github

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultBudgetShare is the share of a credential's hourly rate limit arcflow
// plans within by default, leaving the rest to the organization's other tools
// (a PAT's 5,000 calls are shared by everything that uses it).
const DefaultBudgetShare = 0.5

// ErrDeferred is returned by a deferrable call while the budget is spent; the
// caller tries again later (a reconcile at its next period).
var ErrDeferred = errors.New("github call deferred: arcflow's share of the rate limit is spent until the window resets")

// budget follows a credential's rate-limit window from the headers of every
// response. What must not wait (registration tokens, JIT configurations,
// RemoveRunner before a pod is deleted) is never held back; what can
// (reconciles, runner-list refreshes for registration and busy checks) is,
// while the window's calls used by anyone exceed arcflow's share of it.
type budget struct {
	share      float64
	now        func() time.Time
	metrics    *Metrics
	credential string

	mu        sync.Mutex
	limit     int
	remaining int
	reset     time.Time
	// lastSpent is when a caller last found the share spent.
	lastSpent time.Time
}

func newBudget(share float64, now func() time.Time, m *Metrics, credential string) *budget {
	if share <= 0 || share > 1 {
		share = DefaultBudgetShare
	}
	return &budget{share: share, now: now, metrics: m, credential: credential}
}

// observe records GitHub's X-RateLimit-* headers.
func (b *budget) observe(h http.Header) {
	limit, err1 := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	remaining, err2 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	reset, err3 := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || limit <= 0 {
		return
	}
	b.mu.Lock()
	b.limit, b.remaining, b.reset = limit, remaining, time.Unix(reset, 0)
	left, _ := b.leftLocked()
	b.mu.Unlock()
	b.metrics.BudgetRemaining.WithLabelValues(b.credential).Set(float64(max(left, 0)))
}

// leftLocked is how many calls of arcflow's share remain in the window: the
// window's remaining calls less the part kept for others. It is not known
// before GitHub said, or once the window reset.
func (b *budget) leftLocked() (int, bool) {
	if b.limit == 0 || !b.now().Before(b.reset) {
		return 0, false
	}
	return b.remaining - int(float64(b.limit)*(1-b.share)), true
}

// spent reports whether deferrable calls should wait for the window's reset.
func (b *budget) spent() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	left, known := b.leftLocked()
	if known && left <= 0 {
		b.lastSpent = b.now()
		return true
	}
	return false
}

// Throttled reports whether arcflow's share of the credential's rate limit is
// spent for the current window; deferrable calls wait for its reset.
func (c *Client) Throttled() bool { return c.budget.spent() }

// ThrottledSince reports whether the share is spent now, or was found spent
// (a call put off) after t: a window that reset between two looks still
// counts, so a look every few seconds misses no throttling.
func (c *Client) ThrottledSince(t time.Time) bool {
	if c.budget.spent() {
		return true
	}
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	return c.budget.lastSpent.After(t)
}

// BudgetReset is when the current rate-limit window ends (zero if unknown).
func (c *Client) BudgetReset() time.Time {
	c.budget.mu.Lock()
	defer c.budget.mu.Unlock()
	return c.budget.reset
}
