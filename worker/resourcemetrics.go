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
	for _, d := range []*prometheus.Desc{hraMinDesc, hraMaxDesc, hraDesiredDesc, rdReplicasDesc, rsReplicasDesc, failuresDesc, warmRunnersDesc, idleRunnerSecondsDesc} {
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
		warmMetrics(ch, "RunnerDeployment", u)
	})
	each(rss, func(u *unstructured.Unstructured) {
		gauge(rsReplicasDesc, u, "spec", "replicas")
		failures("RunnerSet")(u)
		warmMetrics(ch, "RunnerSet", u)
	})
}
