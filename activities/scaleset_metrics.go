package activities

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/github/scaleset"
)

// ScaleSetMetrics are the metrics of ARC's scale set listener
// (cmd/ghalistener/metrics: names, help, label names and buckets) under
// arcflow's prefix, so that a dashboard of ARC's moves by swapping gha_ for
// arcflow_gha_.
//
// Any worker replica may run a set's poll, so a set's gauges are exported
// only while its poll runs here and deleted when the poll returns or fails:
// a sum over the replicas counts each set once. The job counters and
// histograms are counted where the message arrived; a message redelivered
// after a failover (or a poll that failed after it got one) is counted again.
type ScaleSetMetrics struct {
	assigned, running, registered, busy, idle, desired, minRunners, maxRunners *prometheus.GaugeVec
	started, completed                                                         *prometheus.CounterVec
	startup, execution                                                         *prometheus.HistogramVec

	mu sync.Mutex
	// owners names the poll whose gauges a set shows, by the set's label
	// values: a poll that ends after a newer one of the same set started
	// here deletes nothing.
	owners map[string]uint64
	polls  uint64
}

// The label names are ARC's; a worker exports many sets, so the job metrics
// also carry the set's name and namespace. ARC's job_name is left out: a
// display name per matrix leg, times 47 series a histogram, is unbounded.
var (
	scaleSetLabelNames     = []string{"name", "namespace", "enterprise", "organization", "repository"}
	startedJobLabelNames   = []string{"name", "namespace", "enterprise", "organization", "repository", "event_name"}
	completedJobLabelNames = []string{"name", "namespace", "enterprise", "organization", "repository", "event_name", "job_result"}
	// jobDurationBuckets are ARC's defaultRuntimeBuckets, in seconds.
	jobDurationBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100,
		110, 120, 150, 180, 210, 240, 300, 360, 420, 480, 540, 600, 900, 1200, 1800, 2400, 3000, 3600}
)

// NewScaleSetMetrics creates the arcflow_gha_ metrics and registers them with
// reg (nil: not registered).
func NewScaleSetMetrics(reg prometheus.Registerer) *ScaleSetMetrics {
	m := &ScaleSetMetrics{
		assigned:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_assigned_jobs", Help: "Number of jobs assigned to this scale set."}, scaleSetLabelNames),
		running:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_running_jobs", Help: "Number of jobs running (or about to be run)."}, scaleSetLabelNames),
		registered: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_registered_runners", Help: "Number of runners registered by the scale set."}, scaleSetLabelNames),
		busy:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_busy_runners", Help: "Number of registered runners running a job."}, scaleSetLabelNames),
		idle:       prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_idle_runners", Help: "Number of registered runners not running a job."}, scaleSetLabelNames),
		desired:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_desired_runners", Help: "Number of runners desired by the scale set."}, scaleSetLabelNames),
		minRunners: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_min_runners", Help: "Minimum number of runners."}, scaleSetLabelNames),
		maxRunners: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "arcflow_gha_max_runners", Help: "Maximum number of runners."}, scaleSetLabelNames),
		started:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arcflow_gha_started_jobs_total", Help: "Total number of jobs started."}, startedJobLabelNames),
		completed:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arcflow_gha_completed_jobs_total", Help: "Total number of jobs completed."}, completedJobLabelNames),
		startup: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "arcflow_gha_job_startup_duration_seconds",
			Help: "Time spent waiting for workflow job to get started on the runner owned by the scale set (in seconds).", Buckets: jobDurationBuckets}, startedJobLabelNames),
		execution: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "arcflow_gha_job_execution_duration_seconds",
			Help: "Time spent executing workflow jobs by the scale set (in seconds).", Buckets: jobDurationBuckets}, completedJobLabelNames),
		owners: map[string]uint64{},
	}
	if reg != nil {
		for _, c := range m.collectors() {
			reg.MustRegister(c)
		}
	}
	return m
}

func (m *ScaleSetMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.assigned, m.running, m.registered, m.busy, m.idle, m.desired, m.minRunners, m.maxRunners,
		m.started, m.completed, m.startup, m.execution}
}

func (m *ScaleSetMetrics) gauges() []*prometheus.GaugeVec {
	return []*prometheus.GaugeVec{m.assigned, m.running, m.registered, m.busy, m.idle, m.desired, m.minRunners, m.maxRunners}
}

// setLabels are the set's label values, in scaleSetLabelNames' order: the
// scope as ARC reads its config URL (a repository's owner is its
// organization).
func setLabels(in calls.PollScaleSetInput) []string {
	org, repo := in.Set.Scope.Organization, ""
	if owner, name, ok := strings.Cut(in.Set.Scope.Repository, "/"); ok {
		org, repo = owner, name
	}
	return []string{in.Name, in.Namespace, in.Set.Scope.Enterprise, org, repo}
}

// polling exports the set's gauges, from the last statistics the listener
// recorded, for as long as the poll runs; the poll calls the returned func
// when it ends. A listener of an older arcflow names no set: nothing then.
func (m *ScaleSetMetrics) polling(in calls.PollScaleSetInput) (stop func()) {
	if m == nil || in.Name == "" {
		return func() {}
	}
	labels := setLabels(in)
	key := strings.Join(labels, "\x00")
	st := in.Statistics
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	poll := m.polls
	m.owners[key] = poll
	values := []int{ // in gauges()' order
		st.Assigned, st.Running, st.Registered, st.Busy, st.Idle,
		desiredRunners(in.MinRunners, in.MaxCapacity, st.Assigned), in.MinRunners, in.MaxCapacity}
	for i, g := range m.gauges() {
		g.WithLabelValues(labels...).Set(float64(values[i]))
	}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.owners[key] != poll {
			return
		}
		delete(m.owners, key)
		for _, g := range m.gauges() {
			g.DeleteLabelValues(labels...)
		}
	}
}

// desiredRunners is the level the listener asks for, as ARC's listener
// computes it: minRunners plus the assigned jobs, at most maxRunners.
func desiredRunners(minRunners, maxRunners, assigned int) int {
	return max(min(minRunners+assigned, maxRunners), 0)
}

// received counts the starts and ends of a message's jobs, as ARC's listener
// does: the startup is the set's assignment (or, lacking it, the queueing) to
// the runner's, the execution the runner's assignment to the finish; an end
// no runner was assigned to (a job withdrawn) is not counted.
func (m *ScaleSetMetrics) received(in calls.PollScaleSetInput, msg *scaleset.Message) {
	if m == nil || in.Name == "" {
		return
	}
	for _, j := range msg.Jobs {
		labels := []string{in.Name, in.Namespace, in.Set.Scope.Enterprise, j.OwnerName, j.RepositoryName, j.EventName}
		runnerAssigned := parseStamp(j.RunnerAssignTime)
		switch j.MessageType {
		case scaleset.JobStarted:
			m.started.WithLabelValues(labels...).Inc()
			setAssigned := parseStamp(j.ScaleSetAssignTime)
			if setAssigned.IsZero() {
				setAssigned = parseStamp(j.QueueTime) // a start that leaves it out
			}
			observeBetween(m.startup.WithLabelValues(labels...), setAssigned, runnerAssigned)
		case scaleset.JobCompleted:
			if runnerAssigned.IsZero() {
				continue
			}
			labels = append(labels, j.Result)
			m.completed.WithLabelValues(labels...).Inc()
			observeBetween(m.execution.WithLabelValues(labels...), runnerAssigned, parseStamp(j.FinishTime))
		}
	}
}

// observeBetween observes the time from one stamp to the next; a stamp the
// message lacks, or one before the other, is no duration.
func observeBetween(o prometheus.Observer, from, to time.Time) {
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return
	}
	o.Observe(to.Sub(from).Seconds())
}
