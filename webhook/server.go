package webhook

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
)

// Signaler is the part of the Temporal client the server uses.
type Signaler interface {
	SignalWithStartWorkflow(ctx context.Context, workflowID, signalName string, signalArg any,
		options client.StartWorkflowOptions, workflow any, workflowArgs ...any) (client.WorkflowRun, error)
}

// Config configures the webhook server.
type Config struct {
	// Secret is the webhook secret (GITHUB_WEBHOOK_SECRET_TOKEN). Without it the
	// server refuses to start unless Insecure is set.
	Secret   []byte
	Insecure bool
	// MaxBodyBytes bounds a delivery (GitHub sends at most 25 MB; 1 MiB by default).
	MaxBodyBytes int64
	// SignalTimeout bounds the wait for Temporal to accept a signal, and a
	// delivery's whole wait (queued behind an in-flight signal, then its own).
	SignalTimeout time.Duration
	// ReadTimeout bounds reading a request, headers and body
	// (DefaultReadTimeout when zero).
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end of its
	// answer; it must exceed ReadTimeout plus SignalTimeout (DefaultWriteTimeout
	// when zero).
	WriteTimeout time.Duration
	// MaxConnections caps the connections open at once (zero: no cap;
	// DefaultMaxConnections is arcflow's default).
	MaxConnections int
	Autoscaling    hraspec.Options
	// TemporalNamespace is the namespace the client signals in, named in the
	// 503 that says it is missing.
	TemporalNamespace string
}

// Server is the webhook HTTP server.
type Server struct {
	cfg     Config
	finder  Finder
	log     *slog.Logger
	metrics *metrics
	commits *groupCommitter
	echo    *echo.Echo
}

// New builds the server. It fails without a secret unless cfg.Insecure is set, so a
// deployment cannot forget to verify signatures.
func New(cfg Config, finder Finder, temporal Signaler, reg *prometheus.Registry, log *slog.Logger) (*Server, error) {
	if len(cfg.Secret) == 0 && !cfg.Insecure {
		return nil, errors.New("webhook: no secret: set GITHUB_WEBHOOK_SECRET_TOKEN, or pass --insecure-skip-signature-check for local tests")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.SignalTimeout <= 0 {
		cfg.SignalTimeout = 10 * time.Second
	}
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, DefaultWriteTimeout)
	if err := validateListener(cfg); err != nil {
		return nil, err
	}
	m := newMetrics(reg)
	s := &Server{cfg: cfg, finder: finder, log: log, metrics: m,
		commits: newGroupCommitter(temporal, cfg.SignalTimeout, m), echo: echo.New()}
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.POST("/webhook", s.handle)
	e.POST("/", s.handle) // ARC's path
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "webhook server is running") })
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	return s, nil
}

// Handler is the server as an http.Handler, for tests and embedding.
func (s *Server) Handler() http.Handler { return s.echo }

type metrics struct {
	deliveries   *prometheus.CounterVec
	signals      *prometheus.CounterVec
	signal       prometheus.Histogram
	signalEvents prometheus.Histogram
	startup      prometheus.Histogram
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arcflow_webhook_deliveries_total", Help: "Webhook deliveries by event and result.",
		}, []string{"event", "result"}),
		signal: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "arcflow_webhook_signal_seconds", Help: "Time for Temporal to accept an autoscaler signal.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		signals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arcflow_webhook_signals_total", Help: "Autoscaler signals sent, by signal name (job: one event, jobs: a group commit) and result.",
		}, []string{"signal", "result"}),
		signalEvents: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "arcflow_webhook_signal_events", Help: "Job events (deliveries) carried per autoscaler signal.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9),
		}),
	}
	m.startup = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "arcflow_job_startup_duration_seconds", Help: "Time from a workflow job queued to a runner starting it, from in_progress deliveries.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 14),
	})
	reg.MustRegister(m.deliveries, m.signals, m.signal, m.signalEvents, m.startup)
	return m
}
