package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

const listenerManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: bench
  annotations:
    arcflow.dev/scale-set: bench-set
spec:
  template:
    spec:
      repository: bench-org/app
      labels: [linux]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: bench
spec:
  scaleTargetRef:
    name: bench
  minReplicas: 0
  maxReplicas: %d
  scaleDownDelaySecondsAfterScaleOut: 10
`

// listenerBench is a runner scale set's listener under test: two workers, no
// webhook, the fake Actions service holding polls 50 s as GitHub's does.
type listenerBench struct {
	s      *session
	w      *world.World
	ns, id string
	// jobsDone counts the jobs queued so far, all of which must complete.
	jobsDone int
}

// benchListener measures the scale set listener: job assigned → runner pod
// Running for one job and a burst, Actions service calls and Temporal actions
// per job, actions per idle hour, and the failover after a SIGKILL.
func benchListener(ctx context.Context, s *session, burst int, idle time.Duration) (string, error) {
	const ns = "bench-listener"
	w, err := s.world(ctx, world.Config{Namespace: ns, NoWebhook: true, Workers: 2, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: 21})
	if err != nil {
		return "", err
	}
	defer func() { _ = w.Stop() }()
	lb := &listenerBench{s: s, w: w, ns: ns, id: contract.ScaleSetWorkflowID(ns, "RunnerDeployment", "bench")}
	if err := w.Apply(ctx, fmt.Sprintf(listenerManifest, burst)); err != nil {
		return "", err
	}
	if err := waitFor(ctx, 2*time.Minute, "the listener to hold the set's session", func() bool {
		sets := w.GitHub.ScaleSets()
		return len(sets) == 1 && sets[0].Session != ""
	}); err != nil {
		return "", err
	}

	idleActions, err := lb.idle(ctx, idle)
	if err != nil {
		return "", err
	}
	one, _, _, _, err := lb.run(ctx, 1)
	if err != nil {
		return "", err
	}
	many, calls, actions, steps, err := lb.run(ctx, burst)
	if err != nil {
		return "", err
	}
	moved, err := lb.failover(ctx)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n### Runner scale set listener: no webhook, two workers, polls held 50 s (%s)\n\n", s.serverName())
	b.WriteString("| Figure | arcflow | target |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| one job: assigned to the set → runner pod Running | %s | ≤ 0.3 s |\n", one)
	fmt.Fprintf(&b, "| %d jobs at once: assigned → pod Running p50 / p95 / p99 | %s | p99 ≤ 2 s |\n", burst, many)
	fmt.Fprintf(&b, "| failover: the polling worker SIGKILLed → the poll running on the other | %s, every job queued after it run once | ≤ 15 s, nothing lost |\n", moved.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "| Actions service calls per job, polls apart (%d jobs) | %s | |\n", burst, calls)
	fmt.Fprintf(&b, "| Temporal actions per job (%d jobs) | %.2f: %s | |\n", burst, float64(actions.From.Total())/float64(burst), world.PaidBy(actions.ByWorkflow, burst))
	fmt.Fprintf(&b, "| Temporal actions per idle hour (measured over %v, scaled) | %.0f: %s | ≤ 100 |\n", idle, idleActions.perHour, idleActions.what)
	for _, st := range steps {
		fmt.Fprintf(&b, "| %d jobs at once, p50 / p95 / p99: %s | %s | |\n", burst, strings.Replace(st.Name, "webhook accepted", "job assigned", 1), st.Took)
	}
	return b.String(), nil
}

type idleCost struct {
	perHour float64
	what    string
}

// idle counts what the listener costs with no job: its history's actions and
// the heartbeats the workers sent, over d.
func (lb *listenerBench) idle(ctx context.Context, d time.Duration) (idleCost, error) {
	step(fmt.Sprintf("the listener idle for %v", d))
	// Settled first: the session's level sent, the poll running, the pool's
	// and autoscaler's first status written.
	select {
	case <-ctx.Done():
		return idleCost{}, ctx.Err()
	case <-time.After(15 * time.Second):
	}
	base, err := world.ClientActions(ctx, lb.w.WorkerMetricsURLs...)
	if err != nil {
		return idleCost{}, err
	}
	start := time.Now()
	select {
	case <-ctx.Done():
		return idleCost{}, ctx.Err()
	case <-time.After(d):
	}
	elapsed := time.Since(start)
	client, err := world.ClientActions(ctx, lb.w.WorkerMetricsURLs...)
	if err != nil {
		return idleCost{}, err
	}
	runs, err := world.NamespaceActions(ctx, lb.s.temporal, lb.ns, start)
	if err != nil {
		return idleCost{}, err
	}
	total := runs.From.Plus(client.Since(base))
	scale := float64(time.Hour) / float64(elapsed)
	return idleCost{perHour: float64(total.Total()) * scale, what: total.PerUnit(1)}, nil
}

// run queues n jobs at once and waits for them to end and the pool to empty;
// it gives assigned → pod Running, the Actions service calls per job (polls
// apart) and the Temporal actions from the first job on.
func (lb *listenerBench) run(ctx context.Context, n int) (world.Percentiles, string, world.RunActions, []world.Step, error) {
	step(fmt.Sprintf("%d scale set jobs at once", n))
	w := lb.w
	start := time.Now()
	callsBefore := len(w.GitHub.Calls())
	for i := range n {
		w.Queue("bench-org/app", fmt.Sprintf("job-%d-%d", n, i), []string{"bench-set"})
	}
	lb.jobsDone += n
	if err := waitFor(ctx, 20*time.Minute, "every job to complete", func() bool {
		return w.GitHub.JobsIn("completed") == lb.jobsDone
	}); err != nil {
		return world.Percentiles{}, "", world.RunActions{}, nil, err
	}
	if err := waitFor(ctx, 5*time.Minute, "the pool to empty", func() bool {
		return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0
	}); err != nil {
		return world.Percentiles{}, "", world.RunActions{}, nil, err
	}
	var assigned, ready []time.Time
	for _, j := range w.GitHub.Jobs() {
		if j.CreatedAt.After(start) || j.CreatedAt.Equal(start) {
			assigned = append(assigned, j.ScaleSetAssignedAt)
		}
	}
	for _, p := range w.Runners.PodTimes() {
		if p.Created.After(start) && !p.Ready.IsZero() {
			ready = append(ready, p.Ready)
		}
	}
	sort.Slice(assigned, func(i, j int) bool { return assigned[i].Before(assigned[j]) })
	sort.Slice(ready, func(i, j int) bool { return ready[i].Before(ready[j]) })
	// The k-th job assigned is paired with the k-th pod Running: the service
	// gives any of the set's jobs to any of its runners.
	var waits []time.Duration
	for i := range min(len(assigned), len(ready)) {
		waits = append(waits, ready[i].Sub(assigned[i]))
	}
	counts := map[string]int{}
	total := 0
	for _, c := range w.GitHub.Calls()[callsBefore:] {
		if c.Method == "GET" && strings.HasSuffix(c.Endpoint, "/messages") {
			continue // polls
		}
		counts[c.Method+" "+strings.TrimPrefix(c.Endpoint, c.Method+" ")]++
		total++
	}
	actions, err := world.NamespaceActions(ctx, lb.s.temporal, lb.ns, start)
	if err != nil {
		return world.Percentiles{}, "", world.RunActions{}, nil, err
	}
	// The critical path, stage by stage, from the job's assignment on.
	m, err := world.ReadMilestones(ctx, lb.s.temporal, contract.AutoscalerWorkflowID(lb.ns, "bench"),
		contract.PoolWorkflowID(lb.ns, "RunnerDeployment", "bench"), lb.ns, start)
	if err != nil {
		return world.Percentiles{}, "", world.RunActions{}, nil, fmt.Errorf("critical path: %w", err)
	}
	m.Accepted, m.Ready = assigned, ready
	for _, p := range w.Runners.PodTimes() {
		if p.Created.After(start) {
			m.PodCreated = append(m.PodCreated, p.Created)
		}
	}
	return world.PercentilesOf(waits), fmt.Sprintf("%.2f (%d calls)", float64(total)/float64(n), total), actions, m.Steps(), nil
}

// failover SIGKILLs the worker running the poll and times how long until the
// other worker runs it; then jobs queued after the kill must all run.
func (lb *listenerBench) failover(ctx context.Context) (time.Duration, error) {
	step("the polling worker SIGKILLed")
	holder, pollID := lb.pollHolder(ctx)
	var victim *world.Process
	for _, p := range lb.w.Workers {
		if world.IsProcess(holder, p.Pid()) {
			victim = p
		}
	}
	if victim == nil {
		return 0, fmt.Errorf("no worker of this world runs the poll (holder %q)", holder)
	}
	killed := time.Now()
	victim.Kill()
	var moved time.Duration
	if err := waitFor(ctx, 3*time.Minute, "the poll to run on the other worker", func() bool {
		other, id := lb.pollHolder(ctx)
		if other == "" || other == holder || id == pollID {
			return false
		}
		moved = time.Since(killed)
		return true
	}); err != nil {
		return 0, err
	}
	for i := range 5 {
		lb.w.Queue("bench-org/app", fmt.Sprintf("after-kill-%d", i), []string{"bench-set"})
	}
	lb.jobsDone += 5
	return moved, waitFor(ctx, 5*time.Minute, "the jobs queued after the kill to complete", func() bool {
		return lb.w.GitHub.JobsIn("completed") == lb.jobsDone
	})
}

// pollHolder is the identity of the worker running the poll, and the poll's
// activity ID.
func (lb *listenerBench) pollHolder(ctx context.Context) (string, string) {
	desc, err := lb.s.temporal.DescribeWorkflowExecution(ctx, lb.id, "")
	if err != nil {
		return "", ""
	}
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() == calls.PollScaleSet && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return pa.GetLastWorkerIdentity(), pa.GetActivityId()
		}
	}
	return "", ""
}
