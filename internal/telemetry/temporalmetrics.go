package telemetry

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// temporalLabels is the fixed label set of every Temporal SDK metric. Prometheus
// needs one label set per name, while the SDK tags the same metric differently
// in different places; tags outside this set are dropped, missing ones are empty.
var temporalLabels = []string{"namespace", "task_queue", "workflow_type", "activity_type", "operation", "worker_type", "poller_type"}

// TemporalMetrics exposes the Temporal SDK's metrics (task latencies, poll
// results, slots, sticky cache, request failures) to Prometheus. It stands in for
// go.temporal.io/sdk/contrib/tally, which the module proxy here does not serve.
type TemporalMetrics struct {
	reg  prometheus.Registerer
	mu   sync.Mutex
	vecs map[string]prometheus.Collector
}

// NewTemporalMetrics returns a client.MetricsHandler that registers with reg.
func NewTemporalMetrics(reg prometheus.Registerer) client.MetricsHandler {
	return &temporalHandler{root: &TemporalMetrics{reg: reg, vecs: map[string]prometheus.Collector{}}}
}

type temporalHandler struct {
	root *TemporalMetrics
	tags map[string]string
}

func (h *temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &temporalHandler{root: h.root, tags: merged}
}

func (h *temporalHandler) labels() prometheus.Labels {
	l := prometheus.Labels{}
	for _, name := range temporalLabels {
		l[name] = h.tags[name]
	}
	return l
}

func (h *temporalHandler) Counter(name string) client.MetricsCounter {
	vec := h.root.vec(name, func(n string) prometheus.Collector {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: n, Help: "Temporal SDK counter " + n + "."}, temporalLabels)
	}).(*prometheus.CounterVec)
	return counter{vec.With(h.labels())}
}

func (h *temporalHandler) Gauge(name string) client.MetricsGauge {
	vec := h.root.vec(name, func(n string) prometheus.Collector {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: n, Help: "Temporal SDK gauge " + n + "."}, temporalLabels)
	}).(*prometheus.GaugeVec)
	return gauge{vec.With(h.labels())}
}

func (h *temporalHandler) Timer(name string) client.MetricsTimer {
	vec := h.root.vec(name+"_seconds", func(n string) prometheus.Collector {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: n, Help: "Temporal SDK timer " + name + ", in seconds.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, temporalLabels)
	}).(*prometheus.HistogramVec)
	return timer{vec.With(h.labels())}
}

// vec returns the collector of a metric name, registering it on first use.
func (m *TemporalMetrics) vec(name string, build func(string) prometheus.Collector) prometheus.Collector {
	name = strings.ReplaceAll(name, "-", "_")
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.vecs[name]; ok {
		return c
	}
	c := build(name)
	if err := m.reg.Register(c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			c = are.ExistingCollector
		}
	}
	m.vecs[name] = c
	return c
}

type counter struct{ c prometheus.Counter }

func (c counter) Inc(n int64) {
	if n > 0 {
		c.c.Add(float64(n))
	}
}

type gauge struct{ g prometheus.Gauge }

func (g gauge) Update(v float64) { g.g.Set(v) }

type timer struct{ o prometheus.Observer }

func (t timer) Record(d time.Duration) { t.o.Observe(d.Seconds()) }
