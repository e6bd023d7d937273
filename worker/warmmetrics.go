package worker

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The warm buffer of arcflow.dev/idle-runners: auto, per pool, from the
// pool's status.warm: what it keeps and what it cost. Pools without an auto
// buffer have no status.warm and export neither.
var (
	warmRunnersDesc = prometheus.NewDesc("arcflow_warm_runners",
		"Warm runners the autoscaler of a pool keeps on top of its jobs (arcflow.dev/idle-runners: auto; status.warm.runners).",
		[]string{"kind", "name", "namespace"}, nil)
	idleRunnerSecondsDesc = prometheus.NewDesc("arcflow_idle_runner_seconds_total",
		"Runner-seconds a pool's registered runners spent without a job, while its autoscaler keeps an auto buffer (status.warm.idleRunnerSeconds).",
		[]string{"kind", "name", "namespace"}, nil)
)

// warmMetrics exports a pool's status.warm.
func warmMetrics(ch chan<- prometheus.Metric, kind string, u *unstructured.Unstructured) {
	if v, found, err := unstructured.NestedInt64(u.Object, "status", "warm", "runners"); err == nil && found {
		ch <- prometheus.MustNewConstMetric(warmRunnersDesc, prometheus.GaugeValue, float64(v), kind, u.GetName(), u.GetNamespace())
	}
	if v, found, err := unstructured.NestedInt64(u.Object, "status", "warm", "idleRunnerSeconds"); err == nil && found {
		ch <- prometheus.MustNewConstMetric(idleRunnerSecondsDesc, prometheus.CounterValue, float64(v), kind, u.GetName(), u.GetNamespace())
	}
}
