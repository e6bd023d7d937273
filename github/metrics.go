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
	// BudgetRemaining is what is left of arcflow's share of the window;
	// Deferred counts calls put off because it ran out.
	BudgetRemaining *prometheus.GaugeVec
	Deferred        *prometheus.CounterVec
	// RunnerListReads counts reads of a scope's runner list that called
	// GitHub, by what waited on them (WithPurpose).
	RunnerListReads *prometheus.CounterVec
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
		BudgetRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "arcflow_github_budget_remaining",
			Help: "Calls left of arcflow's share of the credential's GitHub rate-limit window (--github-budget-share); at 0 deferrable calls wait for the reset.",
		}, []string{"credential"}),
		Deferred: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arcflow_github_deferred_calls_total",
			Help: "GitHub calls arcflow put off while its call budget was spent, by call.",
		}, []string{"credential", "call"}),
		RunnerListReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arcflow_github_runner_list_reads_total",
			Help: "Reads of a scope's runner list that called GitHub (one call per page), by what waited on them: registration, patient-registration, fresh, busy, metrics.",
		}, []string{"credential", "purpose"}),
	}
	if reg != nil {
		reg.MustRegister(m.RateLimit, m.RateLimitRemaining, m.Calls, m.BudgetRemaining, m.Deferred, m.RunnerListReads)
	}
	return m
}
