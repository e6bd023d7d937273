package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// scaleTable is the scale run's table: one row per step, every figure
// measured in that step's window. A figure that could not be measured says
// so instead of showing a number.
func scaleTable(rows []scaleRow) string {
	var b strings.Builder
	b.WriteString("| jobs/s | jobs in window (not started when read) | queued → pod Running p50 / p99 | queued → started p50 / p99 | webhook answer p99 | live runners end (peak) | live workflows | Temporal actions/s; per job | CPU cores: worker / webhook / Temporal server (+ PostgreSQL) / kube-apiserver / etcd / kwok / simulator / machine | RSS worker / webhook / Temporal peak | kube API req/s from arcflow | GitHub calls per job | largest history (workflow) | busiest workflow: signals/s | worker p99: workflow task wait / activity task wait / workflow task run | Temporal server: persistence calls/s, mean; request mean | store writes per job | slowest 1 % of jobs by label set | stop |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r.line())
	}
	return b.String()
}

func (r scaleRow) line() string {
	if !r.measured() {
		return fmt.Sprintf("| %g | not measured |%s %s |\n", r.rate, strings.Repeat(" |", 16), r.stop)
	}
	secs := r.window.Seconds()
	workflows := fmt.Sprint(r.liveWorkflows)
	if r.liveWorkflowsErr != nil {
		workflows = "not measured (count failed)"
	}
	actions, largest, busiest := "from the histories, after the run", "after the run", "after the run"
	if h := r.history; h != nil {
		total := h.Actions.Plus(r.clientActions).Total()
		actions = fmt.Sprintf("%.1f; %.1f", float64(total)/secs, float64(total)/float64(max(r.jobs, 1)))
		largest = fmt.Sprintf("%d (%s)", h.LargestHistory, h.LargestID)
		busiest = fmt.Sprintf("%.2f (%s)", float64(h.BusiestSignals)/secs, h.BusiestID)
	}
	webhook := "n/a"
	if r.answers > 0 {
		webhook = fmt.Sprintf("%v (%d answers)", round1ms(r.webhookP99), r.answers)
	}
	temporal := fmt.Sprintf("%.2f", r.temporal)
	if r.postgres > 0 {
		temporal = fmt.Sprintf("%.2f + %.2f", r.temporal, r.postgres)
	}
	stop := r.stop
	if stop == "" {
		stop = "-"
	}
	return fmt.Sprintf("| %g | %d (%d) | %s | %s | %s | %d (%d) | %s | %s | %.2f / %.2f / %s / %.2f / %.2f / %.2f / %.2f / %.2f | %s / %s / %s | %.1f | %.3f | %s | %s | %s / %s / %s | %.0f/s, %v; %v | %s | %s | %s |\n",
		r.rate, r.jobs, r.unstarted, p50p99(r.toRunning), p50p99(r.toStarted), webhook, r.liveRunners, r.peakRunners, workflows, actions,
		r.worker, r.webhook, temporal, r.apiserver, r.etcd, r.kwok, r.sim, r.host,
		mib(r.workerRSS), mib(r.webhookRSS), mib(r.temporalRSS), r.kubeRPS, r.githubPerJob, largest, busiest,
		r.workflowTaskWaitP99, r.activityTaskWaitP99, r.workflowTaskRunP99,
		r.persistenceRate, round1ms(r.persistenceMean), round1ms(r.requestMean), kib(r.storeWritesPerJob), r.slowest, stop)
}

func p50p99(p world.Percentiles) string {
	if p.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%v / %v", round1ms(p.P50), round1ms(p.P99))
}

func round1ms(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func kib(bytes float64) string { return fmt.Sprintf("%.0f KiB", bytes/1024) }
