package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

// scaleRow is what one step of the scale run measured in its window.
type scaleRow struct {
	rate   float64
	window world.Window
	// jobs arrived in the window; unstarted of them had not started when the
	// waits were read (their wait so far is counted, a lower bound).
	jobs, unstarted int
	// toRunning is job queued -> the pod of the runner that took it Running
	// (0 when that pod ran before the job was queued: an idle runner).
	toRunning, toStarted  world.Percentiles
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
	workerRSS, webhookRSS int64 // the worker's summed over the processes
	temporalRSS           int64
	kubeRPS               float64
	githubPerJob          float64
	// Bucket bounds of the SDK's p99 task latencies in the worker.
	workflowTaskWaitP99, activityTaskWaitP99, workflowTaskRunP99 string
	clientActions                                                world.Actions
	// The Temporal server's persistence calls per second and their mean
	// latency, its requests' mean latency, and its store's writes per job.
	persistenceRate              float64
	persistenceMean, requestMean time.Duration
	storeWritesPerJob            float64 // bytes
	// workers is what each worker process did; leaderStart and leaderEnd who
	// held the Lease (ran the Kubernetes watchers) at the window's ends.
	workers                []workerShare
	leaderStart, leaderEnd leaderSnap
	// slowest counts the label sets of the slowest 1 % of the window's jobs.
	slowest string
	// history is filled from the workflow histories after the run.
	history *world.WindowStats
	// stop says why the run stopped after this step ("" if it did not).
	stop string
}

// newScaleRow makes a step's row from its window's two snapshots, the jobs of
// the fake GitHub, the pods of the simulator and the webhook answers.
func newScaleRow(rate float64, a, b scaleSnap, jobs []fakegithub.JobInfo, pods []sim.PodTimes, answers []time.Duration, readAt time.Time) scaleRow {
	wall := b.at.Sub(a.at)
	cores := func(d time.Duration) float64 { return d.Seconds() / wall.Seconds() }
	r := scaleRow{
		rate: rate, window: world.Window{From: a.at, To: b.at},
		worker: cores(b.worker - a.worker), webhook: cores(b.webhook - a.webhook), sim: cores(b.sim - a.sim),
		temporal: cores(b.temporal.CPU - a.temporal.CPU), postgres: cores(b.postgres.CPU - a.postgres.CPU),
		apiserver: cores(b.apiserver.CPU - a.apiserver.CPU), etcd: cores(b.etcd.CPU - a.etcd.CPU), kwok: cores(b.kwok.CPU - a.kwok.CPU),
		host:      b.host.BusyCores(a.host, wall),
		workerRSS: b.workerRSS, webhookRSS: b.webhookRSS, temporalRSS: b.temporal.PeakRSS,
		kubeRPS:  (b.kubeRequests - a.kubeRequests) / wall.Seconds(),
		rejected: b.rejected - a.rejected, failed: b.failed - a.failed,
		liveRunners: b.liveRunners, liveWorkflows: b.liveWorkflows, liveWorkflowsErr: b.liveWorkflowsErr,
		workflowTaskWaitP99: b.workflowTask.Minus(a.workflowTask).Bound(0.99),
		activityTaskWaitP99: b.activityTask.Minus(a.activityTask).Bound(0.99),
		workflowTaskRunP99:  b.workflowTaskRun.Minus(a.workflowTaskRun).Bound(0.99),
		clientActions:       b.clientActions.Since(a.clientActions),
		workers:             workerShares(a.workers, b.workers, wall), leaderStart: a.leader, leaderEnd: b.leader,
	}
	p, q := b.persistence.Minus(a.persistence), b.requests.Minus(a.requests)
	r.persistenceRate = p.Count / wall.Seconds()
	r.persistenceMean = time.Duration(p.Mean() * float64(time.Second))
	r.requestMean = time.Duration(q.Mean() * float64(time.Second))
	if b.answers > a.answers && b.answers <= len(answers) {
		r.answers = b.answers - a.answers
		r.webhookP99 = world.PercentilesOf(answers[a.answers:b.answers]).P99
	}
	ready := map[string]time.Time{}
	for _, p := range pods {
		ready[p.Name] = p.Ready
	}
	var waits, toRunning []time.Duration
	var windowJobs []fakegithub.JobInfo
	for _, j := range jobs {
		if j.CreatedAt.Before(a.at) || !j.CreatedAt.Before(b.at) {
			continue
		}
		r.jobs++
		windowJobs = append(windowJobs, j)
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
	r.toStarted, r.toRunning = world.PercentilesOf(waits), world.PercentilesOf(toRunning)
	if r.jobs > 0 {
		r.githubPerJob = float64(b.githubCalls-a.githubCalls) / float64(r.jobs)
		r.storeWritesPerJob = float64(b.storeWrites-a.storeWrites) / float64(r.jobs)
	}
	r.slowest = slowestLabels(windowJobs, readAt, 0.01)
	return r
}

// measured: the step got as far as its window's two snapshots.
func (r scaleRow) measured() bool { return !r.window.From.IsZero() }

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

// slowestLabels names the label sets (the last label, the pool's) of the
// slowest share of jobs by queued -> started (a job not started counts its
// wait until readAt), most frequent first: whether one pool or all wait.
func slowestLabels(jobs []fakegithub.JobInfo, readAt time.Time, share float64) string {
	wait := func(j fakegithub.JobInfo) time.Duration {
		if j.StartedAt.IsZero() {
			return readAt.Sub(j.CreatedAt)
		}
		return j.StartedAt.Sub(j.CreatedAt)
	}
	sorted := slices.Clone(jobs)
	sort.SliceStable(sorted, func(i, k int) bool { return wait(sorted[i]) > wait(sorted[k]) })
	n := max(1, int(math.Ceil(share*float64(len(sorted)))))
	counts := map[string]int{}
	for _, j := range sorted[:min(n, len(sorted))] {
		if len(j.Labels) > 0 {
			counts[j.Labels[len(j.Labels)-1]]++
		}
	}
	names := slices.Collect(maps.Keys(counts))
	sort.Slice(names, func(i, k int) bool {
		if counts[names[i]] != counts[names[k]] {
			return counts[names[i]] > counts[names[k]]
		}
		return names[i] < names[k]
	})
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s ×%d", name, counts[name]))
	}
	return strings.Join(parts, ", ")
}
