package github

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the client's Prometheus collectors. ARC's names are kept where ARC
// has them; arcflow adds a credential label so several credential sets are told apart.
type Metrics struct {
	RateLimit          *prometheus.GaugeVec
	RateLimitRemaining *prometheus.GaugeVec
	Calls              *prometheus.CounterVec
}

// NewMetrics creates the collectors and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		RateLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "github_rate_limit", Help: "The GitHub API rate limit of a credential set.",
		}, []string{"credential"}),
		RateLimitRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "github_rate_limit_remaining", Help: "Calls left in the current GitHub rate-limit window.",
		}, []string{"credential"}),
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arcflow_github_calls_total", Help: "GitHub API calls that left the process (cache hits excluded), by endpoint and status.",
		}, []string{"credential", "endpoint", "status"}),
	}
	if reg != nil {
		reg.MustRegister(m.RateLimit, m.RateLimitRemaining, m.Calls)
	}
	return m
}
