package worker

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// ResourceMetrics exports ARC's per-resource gauges, read from the resource
// watcher's caches at scrape time. Like ARC's, they come from the leader only.
type ResourceMetrics struct {
	mu             sync.Mutex
	hras, rds, rss cache.GenericLister
}

var (
	hraMinDesc     = prometheus.NewDesc("horizontalrunnerautoscaler_spec_min_replicas", "minReplicas of a HorizontalRunnerAutoscaler.", []string{"horizontalrunnerautoscaler", "namespace"}, nil)
	hraMaxDesc     = prometheus.NewDesc("horizontalrunnerautoscaler_spec_max_replicas", "maxReplicas of a HorizontalRunnerAutoscaler.", []string{"horizontalrunnerautoscaler", "namespace"}, nil)
	hraDesiredDesc = prometheus.NewDesc("horizontalrunnerautoscaler_status_desired_replicas", "status.desiredReplicas of a HorizontalRunnerAutoscaler.", []string{"horizontalrunnerautoscaler", "namespace"}, nil)
	rdReplicasDesc = prometheus.NewDesc("runnerdeployment_spec_replicas", "spec.replicas of a RunnerDeployment.", []string{"runnerdeployment", "namespace"}, nil)
	rsReplicasDesc = prometheus.NewDesc("runnerset_spec_replicas", "spec.replicas of a RunnerSet (ARC defines it but never exports it).", []string{"runnerset", "namespace"}, nil)
	failuresDesc   = prometheus.NewDesc("arcflow_runner_failures_total", "Runners of a pool that could not start, by reason (status.runnerFailures).", []string{"kind", "name", "namespace", "reason"}, nil)
	conditionDesc  = prometheus.NewDesc("arcflow_resource_condition", "A status condition of a RunnerDeployment, RunnerSet or HorizontalRunnerAutoscaler: 1, with its type, status and reason.", []string{"kind", "name", "namespace", "type", "status", "reason"}, nil)
)

// failureReasons are status.runnerFailures' fields and their reason labels,
// the runner end reasons.
var failureReasons = []struct{ field, reason string }{
	{"createFailed", "create-failed"}, {"registrationTimeout", "registration-timeout"},
	{"podFailed", "pod-failed"}, {"podExited", "pod-exited"}, {"podUnschedulable", "pod-unschedulable"},
}

// NewResourceMetrics registers the collector with reg.
func NewResourceMetrics(reg prometheus.Registerer) *ResourceMetrics {
	m := &ResourceMetrics{}
	reg.MustRegister(m)
	return m
}

// use points the collector at the watcher's listers (nil when it stops leading).
func (m *ResourceMetrics) use(hras, rds, rss cache.GenericLister) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hras, m.rds, m.rss = hras, rds, rss
}

// Describe implements prometheus.Collector.
func (m *ResourceMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{hraMinDesc, hraMaxDesc, hraDesiredDesc, rdReplicasDesc, rsReplicasDesc, failuresDesc, conditionDesc, warmRunnersDesc, idleRunnerSecondsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *ResourceMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	hras, rds, rss := m.hras, m.rds, m.rss
	m.mu.Unlock()
	each := func(l cache.GenericLister, f func(u *unstructured.Unstructured)) {
		if l == nil {
			return
		}
		objs, err := l.List(labels.Everything())
		if err != nil {
			return
		}
		for _, o := range objs {
			if u, ok := o.(*unstructured.Unstructured); ok {
				f(u)
			}
		}
	}
	gauge := func(d *prometheus.Desc, u *unstructured.Unstructured, path ...string) {
		if v, found, err := unstructured.NestedInt64(u.Object, path...); err == nil && found {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), u.GetName(), u.GetNamespace())
		}
	}
	each(hras, func(u *unstructured.Unstructured) {
		gauge(hraMinDesc, u, "spec", "minReplicas")
		gauge(hraMaxDesc, u, "spec", "maxReplicas")
		gauge(hraDesiredDesc, u, "status", "desiredReplicas")
		conditionMetrics(ch, "HorizontalRunnerAutoscaler", u)
	})
	failures := func(kind string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			for _, f := range failureReasons {
				if v, found, err := unstructured.NestedInt64(u.Object, "status", "runnerFailures", f.field); err == nil && found {
					ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.CounterValue, float64(v), kind, u.GetName(), u.GetNamespace(), f.reason)
				}
			}
		}
	}
	each(rds, func(u *unstructured.Unstructured) {
		gauge(rdReplicasDesc, u, "spec", "replicas")
		failures("RunnerDeployment")(u)
		conditionMetrics(ch, "RunnerDeployment", u)
		warmMetrics(ch, "RunnerDeployment", u)
	})
	each(rss, func(u *unstructured.Unstructured) {
		gauge(rsReplicasDesc, u, "spec", "replicas")
		failures("RunnerSet")(u)
		conditionMetrics(ch, "RunnerSet", u)
		warmMetrics(ch, "RunnerSet", u)
	})
}

// conditionMetrics exports each of a resource's status conditions as 1, with
// its status and reason as labels, as kube-state-metrics exports a
// Deployment's. True conditions are exported too, so a query can tell an
// accepted resource from one the leader has not listed. How long a condition
// has held is left to the alert's `for`: Prometheus measures it the same way
// whichever writer stamped lastTransitionTime, and however it stamped it.
func conditionMetrics(ch chan<- prometheus.Metric, kind string, u *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	seen := map[string]bool{}
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		// A type listed twice (a hand-edited status) would make the same series
		// twice, and that fails the whole scrape: the first one counts.
		if typ == "" || status == "" || seen[typ] {
			continue
		}
		seen[typ] = true
		ch <- prometheus.MustNewConstMetric(conditionDesc, prometheus.GaugeValue, 1, kind, u.GetName(), u.GetNamespace(), typ, status, reason)
	}
}
