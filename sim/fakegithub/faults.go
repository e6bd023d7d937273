package fakegithub

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

type faults struct {
	rateLimited     int // answer this many calls with a primary rate limit
	secondaryLimits int // answer this many calls with a secondary rate limit
	serverErrors    int // answer this many calls with 502
	reset           time.Time
	retryAfter      time.Duration
	latency         time.Duration
	only            string // limit faults to paths containing this; empty means all
}

// RateLimitNext answers the next n GitHub calls with 403 and X-RateLimit-Remaining: 0,
// resetting at reset, as GitHub does when the primary limit is spent.
func (s *Server) RateLimitNext(n int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.rateLimited, s.faults.reset = n, reset
}

// EnforceRateLimit gives every credential together limit calls per window,
// as GitHub's primary limit does per hour: each answer reports what is left
// and when the window resets, and calls past the limit get 403 until then.
func (s *Server) EnforceRateLimit(limit int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit, s.window, s.windowStart, s.windowCalls = limit, window, s.now(), 0
}

// SecondaryRateLimitNext answers the next n calls with GitHub's secondary limit:
// 403 with Retry-After.
func (s *Server) SecondaryRateLimitNext(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.secondaryLimits, s.faults.retryAfter = n, retryAfter
}

// FailNext answers the next n calls with 502 Bad Gateway.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.serverErrors = n
}

// SetLatency delays every GitHub call.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.latency = d
}

// FaultsOnly limits injected faults to paths containing substr ("" for all).
func (s *Server) FaultsOnly(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.only = substr
}

// applyFaults answers r with an injected fault and reports whether it did. It also
// sets GitHub's rate-limit headers on every answer.
func (s *Server) applyFaults(w http.ResponseWriter, r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/_fake/") {
		return false
	}
	s.mu.Lock()
	f := &s.faults
	latency := f.latency
	applies := f.only == "" || strings.Contains(r.URL.Path, f.only)
	var status int
	h := w.Header()
	reset := s.now().Add(time.Hour)
	s.callsMu.Lock()
	remaining := s.rateLimit - len(s.calls) - 1
	s.callsMu.Unlock()
	if s.window > 0 {
		if !s.now().Before(s.windowStart.Add(s.window)) {
			s.windowStart, s.windowCalls = s.now(), 0
		}
		reset = s.windowStart.Add(s.window)
		remaining = s.rateLimit - s.windowCalls - 1
		s.windowCalls++
	}
	switch {
	case s.window > 0 && remaining < 0:
		status, remaining = http.StatusForbidden, 0
	case applies && f.rateLimited > 0:
		f.rateLimited--
		status, remaining, reset = http.StatusForbidden, 0, f.reset
	case applies && f.secondaryLimits > 0:
		f.secondaryLimits--
		status = http.StatusForbidden
		h.Set("Retry-After", strconv.Itoa(int(f.retryAfter.Seconds())))
	case applies && f.serverErrors > 0:
		f.serverErrors--
		status = http.StatusBadGateway
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.rateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	if status != 0 {
		s.callsMu.Lock()
		s.calls = append(s.calls, Call{At: s.now(), Method: r.Method, Endpoint: "fault", Path: r.URL.Path, Status: status})
		s.callsMu.Unlock()
	}
	s.mu.Unlock()

	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
		}
	}
	switch {
	case status == 0:
		return false
	case h.Get("Retry-After") != "":
		writeJSON(w, status, map[string]string{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
		})
	case status == http.StatusForbidden:
		writeJSON(w, status, map[string]string{
			"message":           "API rate limit exceeded for installation.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
		})
	default:
		writeError(w, status, "Server Error")
	}
	return true
}
