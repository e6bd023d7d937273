package main

import (
	"fmt"
	"time"

	"github.com/arcflow/arcflow/github/fake"
	"github.com/arcflow/arcflow/internal/simworld"
	"github.com/arcflow/arcflow/sim"
)

// scaleRow is what one step of the scale run measured in its window.
type scaleRow struct {
	rate   float64
	window simworld.Window
	// jobs arrived in the window; unstarted of them had not started when the
	// waits were read (their wait so far is counted, a lower bound).
	jobs, unstarted int
	// toRunning is job queued -> the pod of the runner that took it Running
	// (0 when that pod ran before the job was queued: an idle runner).
	toRunning, toStarted  simworld.Percentiles
	webhookP99            time.Duration
	answers               int
	rejected, failed      int
	liveRunners           int
	peakRunners           int
	liveWorkflows         int64
	liveWorkflowsErr      error
	worker, webhook, sim  float64 // CPU cores
	temporal, postgres    float64
	apiserver, etcd, kwok float64
	host                  float64
	workerRSS, webhookRSS int64
	temporalRSS           int64
	kubeRPS               float64
	githubPerJob          float64
	// Bucket bounds of the SDK's p99 task latencies in the worker.
	workflowTaskWaitP99, activityTaskWaitP99, workflowTaskRunP99 time.Duration
	clientActions                                                simworld.Actions
	// history is filled from the workflow histories after the run.
	history *simworld.WindowStats
	// stop says why the run stopped after this step ("" if it did not).
	stop string
}

// newScaleRow makes a step's row from its window's two snapshots, the jobs of
// the fake GitHub, the pods of the simulator and the webhook answers.
func newScaleRow(rate float64, a, b scaleSnap, jobs []fake.JobInfo, pods []sim.PodTimes, answers []time.Duration, readAt time.Time) scaleRow {
	wall := b.at.Sub(a.at)
	cores := func(d time.Duration) float64 { return d.Seconds() / wall.Seconds() }
	r := scaleRow{
		rate: rate, window: simworld.Window{From: a.at, To: b.at},
		worker: cores(b.worker - a.worker), webhook: cores(b.webhook - a.webhook), sim: cores(b.sim - a.sim),
		temporal: cores(b.temporal.CPU - a.temporal.CPU), postgres: cores(b.postgres.CPU - a.postgres.CPU),
		apiserver: cores(b.apiserver.CPU - a.apiserver.CPU), etcd: cores(b.etcd.CPU - a.etcd.CPU), kwok: cores(b.kwok.CPU - a.kwok.CPU),
		host:      b.host.BusyCores(a.host, wall),
		workerRSS: b.workerRSS, webhookRSS: b.webhookRSS, temporalRSS: b.temporal.PeakRSS,
		kubeRPS:  (b.kubeRequests - a.kubeRequests) / wall.Seconds(),
		rejected: b.rejected - a.rejected, failed: b.failed - a.failed,
		liveRunners: b.liveRunners, liveWorkflows: b.liveWorkflows, liveWorkflowsErr: b.liveWorkflowsErr,
		workflowTaskWaitP99: b.workflowTask.Minus(a.workflowTask).AtMost(0.99),
		activityTaskWaitP99: b.activityTask.Minus(a.activityTask).AtMost(0.99),
		workflowTaskRunP99:  b.workflowTaskRun.Minus(a.workflowTaskRun).AtMost(0.99),
		clientActions:       b.clientActions.Since(a.clientActions),
	}
	if b.answers > a.answers && b.answers <= len(answers) {
		r.answers = b.answers - a.answers
		r.webhookP99 = simworld.PercentilesOf(answers[a.answers:b.answers]).P99
	}
	ready := map[string]time.Time{}
	for _, p := range pods {
		ready[p.Name] = p.Ready
	}
	var waits, toRunning []time.Duration
	for _, j := range jobs {
		if j.CreatedAt.Before(a.at) || !j.CreatedAt.Before(b.at) {
			continue
		}
		r.jobs++
		if j.StartedAt.IsZero() {
			r.unstarted++
			waits = append(waits, readAt.Sub(j.CreatedAt))
			continue
		}
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
		if at, ok := ready[j.RunnerName]; ok && !at.IsZero() {
			toRunning = append(toRunning, max(0, at.Sub(j.CreatedAt)))
		}
	}
	r.toStarted, r.toRunning = simworld.PercentilesOf(waits), simworld.PercentilesOf(toRunning)
	if r.jobs > 0 {
		r.githubPerJob = float64(b.githubCalls-a.githubCalls) / float64(r.jobs)
	}
	return r
}

// scaleLimits are when a scale run stops stepping up.
type scaleLimits struct {
	// p99 bounds queued -> started p99.
	p99 time.Duration
	// minFreeMemory is the least MemAvailable the machine may have left.
	minFreeMemory int64
}

// stopReason says why the run must not step up after r, or "" to go on:
// queued -> started p99 past the limit, a delivery refused or failed, or the
// machine's free memory under the limit.
func stopReason(r scaleRow, l scaleLimits, freeMemory int64) string {
	switch {
	case r.rejected > 0 || r.failed > 0:
		return fmt.Sprintf("deliveries refused %d, failed %d", r.rejected, r.failed)
	case l.p99 > 0 && r.toStarted.N > 0 && r.toStarted.P99 > l.p99:
		return fmt.Sprintf("queued → started p99 %v > %v", round1ms(r.toStarted.P99), l.p99)
	case l.minFreeMemory > 0 && freeMemory < l.minFreeMemory:
		return fmt.Sprintf("free memory %s < %s", mib(freeMemory), mib(l.minFreeMemory))
	}
	return ""
}
