package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// runBench is `make bench`: one table per workload size, beside ARC's figures.
func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	dir := fs.String("dir", ".bench", "directory for the stack's state, logs and results")
	sizes := fs.String("sizes", "1,20,100,500", "comma-separated burst sizes (jobs queued at once)")
	maxRunners := fs.Int("max-runners", 100, "maxReplicas cap; each size uses min(size, this)")
	deliveries := fs.Int("deliveries", 2000, "webhook deliveries in the throughput phase (0 skips it)")
	idle := fs.Int("idle-runners", 0, "also hold this many idle runners in one pool and report the worker's memory (0 skips it; the README's figure is 1000)")
	inMemory := fs.Bool("temporal-memory", false, "run the dev server in memory instead of on its SQLite file (a best case no real Temporal reaches)")
	steady := fs.Int("steady-jobs", 40, "jobs of the steady-rate rows (one every 3 s: without and with an idle buffer of 2, and with JIT runners; 0 skips them)")
	steadyPools := fs.Int("steady-pools-jobs", 450, "jobs of the steady load over many pools (0 skips it)")
	steadyPoolsCount := fs.Int("steady-pools-count", 10, "pools (RunnerDeployments with their HRAs) the steady load spreads its jobs over")
	steadyPoolsRate := fs.Float64("steady-pools-rate", 1, "mean arrival rate of the steady load over many pools, in jobs/s")
	steadyPoolsRegistered := fs.Int("steady-pools-registered", 0, "runners the steady load never uses, registered in its scope first (1000 makes each runner list 10 pages longer)")
	steadyPoolsMax := fs.Int("steady-pools-max-replicas", 20, "maxReplicas of each pool of the steady load over many pools (the busiest pool takes about a quarter of the jobs: raise it to measure a rate its cap would hold back)")
	steadyPoolsRegister := fs.Duration("steady-pools-register", 10*time.Second, "how long after Running a runner of the steady load over many pools registers (production runners: about 10 s)")
	warmRates := fs.String("warm-rates", "1,4", "comma-separated rates (jobs/s) of the warm-runner rows: ten pools, 10 s to ready, without a buffer, with 2 per pool, with auto; issue 29's figures are 0.5,1,2,4 with --warm-warmup 60s --warm-measure 4m, about 2 hours (empty skips them)")
	warmWarmup := fs.Duration("warm-warmup", 30*time.Second, "unmeasured start of each warm-runner row")
	warmMeasure := fs.Duration("warm-measure", time.Minute, "measured part of each warm-runner row (longer gives steadier percentiles)")
	warmBuffers := fs.String("warm-buffers", "none;2;auto", "the warm-runner rows' idle buffers, ;-separated: none, a number, or auto[,max=K], each with an optional @<scale-down delay> (default 30s)")
	volumeJobs := fs.Int("volume-jobs", 50, "jobs run one after another, and again in bursts of 10, on a RunnerSet with a cache volume at maxReplicas 5 (0 skips them)")
	failing := fs.Duration("failing", 5*time.Minute, "how long a pool of runners that crash at start runs before its template is fixed (0 skips it)")
	listener := fs.Int("listener-burst", 100, "jobs at once in the runner scale set listener's section, which also measures one job, an idle spell and a failover (0 skips it)")
	listenerIdle := fs.Duration("listener-idle", 3*time.Minute, "how long the scale set listener is held idle to measure its actions per idle hour")
	allInOne := fs.Bool("all-in-one", false, "run `arcflow all` (worker and webhook in one process) instead of a worker and arcflow-webhook")
	_ = fs.Parse(args)
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive number", f)
		}
		ns = append(ns, n)
	}

	s, err := startSession(ctx, *dir, sessionOptions{inMemory: *inMemory})
	if err != nil {
		return err
	}
	started := readCPUTimes() // the runs, not the builds and the stack's start
	defer s.close()
	var report strings.Builder
	for _, n := range ns {
		step(fmt.Sprintf("burst of %d jobs", n))
		r, err := benchBurst(ctx, s, n, min(n, *maxRunners), *allInOne)
		if err != nil {
			return fmt.Errorf("burst of %d: %w", n, err)
		}
		table := r.table()
		fmt.Print(table)
		report.WriteString(table)
	}
	if *deliveries > 0 {
		step(fmt.Sprintf("webhook throughput: %d deliveries", *deliveries))
		table, err := benchWebhook(ctx, s, *deliveries)
		if err != nil {
			return fmt.Errorf("webhook throughput: %w", err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *steady > 0 {
		step(fmt.Sprintf("a steady rate: %d jobs, one every %v, without and with an idle buffer, and with JIT runners", *steady, steadyInterval))
		table, err := benchSteady(ctx, s, *steady)
		if err != nil {
			return err
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *steadyPools > 0 {
		step(fmt.Sprintf("a steady load over %d pools: %d jobs at %.1f jobs/s, %v registration", *steadyPoolsCount, *steadyPools, *steadyPoolsRate, *steadyPoolsRegister))
		table, err := benchSteadyPools(ctx, s, steadyPoolsLoad{pools: *steadyPoolsCount, jobs: *steadyPools, rate: *steadyPoolsRate,
			maxReplicas: *steadyPoolsMax, registered: *steadyPoolsRegistered, register: *steadyPoolsRegister})
		if err != nil {
			return fmt.Errorf("steady load over %d pools: %w", *steadyPoolsCount, err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *warmRates != "" {
		rates, err := parseRates(*warmRates)
		if err != nil {
			return err
		}
		variants, err := parseWarmVariants(*warmBuffers)
		if err != nil {
			return err
		}
		table, err := benchWarm(ctx, s, rates, variants, *warmWarmup, *warmMeasure)
		if err != nil {
			return err
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *volumeJobs > 0 {
		step(fmt.Sprintf("RunnerSet volumes: %d jobs one after another, then in bursts of 10", *volumeJobs))
		table, err := benchVolumes(ctx, s, *volumeJobs)
		if err != nil {
			return fmt.Errorf("RunnerSet volumes: %w", err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *failing > 0 {
		step(fmt.Sprintf("a runner image that crashes at start, for %v", *failing))
		table, err := benchFailing(ctx, s, *failing)
		if err != nil {
			return fmt.Errorf("crashing runners: %w", err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *listener > 0 {
		table, err := benchListener(ctx, s, *listener, *listenerIdle)
		if err != nil {
			return fmt.Errorf("scale set listener: %w", err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	if *idle > 0 {
		step(fmt.Sprintf("%d idle runners", *idle))
		table, err := benchIdleRunners(ctx, s, *idle)
		if err != nil {
			return fmt.Errorf("idle runners: %w", err)
		}
		fmt.Print(table)
		report.WriteString(table)
	}
	return writeReport(filepath.Join(s.dir, "results.md"), "benchmark", report.String(), started)
}

// burstResult is what one burst measured.
type burstResult struct {
	jobs, maxRunners               int
	webhookToPod, webhookToRunning world.Percentiles
	queuedToStarted, webhookAnswer world.Percentiles
	lastDoneToEmpty, total         time.Duration
	podsCreated, peakPods          int
	githubCalls                    map[string]int
	kubeWrites                     map[string]float64
	histories                      world.HistoryStats
	// poolHistories and autoscalerHistories count each continue-as-new run.
	poolHistories, autoscalerHistories world.HistoryStats
	webhookSignals                     world.WebhookSignals
	signalRPC                          world.RequestLatency
	allInOne                           bool // worker* then measure `arcflow all`
	workerRSS, webhookRSS              int64
	// RSS after the burst: anonymous (heap, stacks) and file (binary) pages.
	workerAnon, workerFile, webhookAnon, webhookFile int64
	workerCPU, webhookCPU                            time.Duration
	violations, rejected, failedDlv                  int
	actions                                          world.RunActions
	serverName                                       string
	temporalServer, postgres                         world.ProcessUsage
	// steps is where the time from webhook to Running pod goes.
	steps []world.Step
}

// serverName names the Temporal server process(es) the bench measures.
func (s *session) serverName() string {
	switch {
	case s.temporalServer == localstack.TemporalCluster:
		return "temporal-server on PostgreSQL"
	case s.inMemory:
		return "dev server in memory, a best case"
	default:
		return "dev server on SQLite"
	}
}

// serverUsage reads the Temporal server's process and, on the cluster, PostgreSQL's
// postmaster with its backends, from /proc.
func (s *session) serverUsage() (temporal, postgres world.ProcessUsage) {
	if s.temporalServer == localstack.TemporalCluster {
		return world.UsageOf(s.stack.PID("temporal-server")), world.UsageOf(s.stack.PID("postgres"))
	}
	return world.UsageOf(s.stack.PID("temporal")), world.ProcessUsage{}
}

func benchBurst(ctx context.Context, s *session, n, maxRunners int, allInOne bool) (*burstResult, error) {
	ns := fmt.Sprintf("bench-%d", n)
	w, err := s.world(ctx, world.Config{Namespace: ns, RegisterDelay: time.Second, JobDuration: 5 * time.Second, Seed: uint64(n), AllInOne: allInOne})
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	if err := w.Apply(ctx, autoscaledPool("bench", "bench-org/app", maxRunners)); err != nil {
		return nil, err
	}
	if err := s.waitAccepted(ctx, ns, "bench"); err != nil {
		return nil, err
	}
	if err := s.waitReconciled(ctx, ns, "bench"); err != nil {
		return nil, err
	}
	baseWrites, err := world.KubernetesWrites(ctx, w.WorkerMetricsURL)
	if err != nil {
		return nil, err
	}
	baseSignals, err := world.WebhookSignalCounts(ctx, w.WebhookMetricsURL)
	if err != nil {
		return nil, err
	}
	baseSignalRPC, err := world.TemporalRequestLatency(ctx, w.WebhookMetricsURL, signalWithStart)
	if err != nil {
		return nil, err
	}
	w.GitHub.ResetCalls()
	cpuWorker, cpuWebhook := w.Worker.CPU(), w.Webhook.CPU()
	serverBase, postgresBase := s.serverUsage()
	clientURLs := slices.Concat(w.WorkerMetricsURLs, w.WebhookMetricsURLs)
	clientBase, err := world.ClientActions(ctx, clientURLs...)
	if err != nil {
		return nil, err
	}

	r := &burstResult{jobs: n, maxRunners: maxRunners, serverName: s.serverName()}
	start := time.Now()
	if err := (sim.Workload{Jobs: n, Repositories: []string{"bench-org/app"}, LabelSets: [][]string{{"self-hosted", "linux", "bench"}}}).Run(ctx, w.Queue); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 30*time.Minute, "every job to complete", func() bool {
		r.peakPods = max(r.peakPods, w.Runners.LivePods())
		for _, j := range w.GitHub.Jobs() {
			if j.Status != "completed" {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, err
	}
	var lastDone time.Time
	var waits []time.Duration
	for _, j := range w.GitHub.Jobs() {
		waits = append(waits, j.StartedAt.Sub(j.CreatedAt))
		if j.CompletedAt.After(lastDone) {
			lastDone = j.CompletedAt
		}
	}
	if err := waitFor(ctx, 5*time.Minute, "the pool to empty", func() bool {
		return w.Runners.LivePods() == 0 && len(w.GitHub.Runners()) == 0
	}); err != nil {
		return nil, err
	}
	r.lastDoneToEmpty, r.total = time.Since(lastDone), time.Since(start)
	// Read before the histories below, whose reading costs the server CPU too.
	server, postgres := s.serverUsage()
	r.temporalServer, r.postgres = server.Minus(serverBase), postgres.Minus(postgresBase)
	r.queuedToStarted = world.PercentilesOf(waits)

	stats := w.Sender.Stats()
	r.webhookAnswer = world.PercentilesOf(stats.Latencies)
	r.rejected, r.failedDlv = stats.Rejected, stats.Failed
	var accepted []time.Time
	for _, at := range stats.QueuedAccepted {
		accepted = append(accepted, at)
	}
	sort.Slice(accepted, func(i, j int) bool { return accepted[i].Before(accepted[j]) })
	var toPod, toRunning []time.Duration
	var created, ready []time.Time
	for _, p := range w.Runners.PodTimes() {
		if p.Created.After(start) {
			created = append(created, p.Created)
			if !p.Ready.IsZero() {
				ready = append(ready, p.Ready)
			}
		}
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i].Before(ready[j]) })
	r.podsCreated = len(created)
	// The k-th accepted queued delivery is paired with the k-th new pod: pods are
	// not tied to jobs, and GitHub may give any job to any runner.
	for i := range min(len(accepted), len(created)) {
		toPod = append(toPod, created[i].Sub(accepted[i]))
	}
	for i := range min(len(accepted), len(ready)) {
		toRunning = append(toRunning, ready[i].Sub(accepted[i]))
	}
	r.webhookToPod, r.webhookToRunning = world.PercentilesOf(toPod), world.PercentilesOf(toRunning)
	m, err := world.ReadMilestones(ctx, s.temporal, contract.AutoscalerWorkflowID(ns, "bench"),
		contract.PoolWorkflowID(ns, "RunnerDeployment", "bench"), ns, start)
	if err != nil {
		return nil, fmt.Errorf("critical path: %w", err)
	}
	m.Accepted, m.PodCreated, m.Ready = accepted, created, ready
	r.steps = m.Steps()
	r.githubCalls = w.GitHub.CallCounts()
	writes, err := world.KubernetesWrites(ctx, w.WorkerMetricsURL)
	if err != nil {
		return nil, err
	}
	for k, v := range baseWrites {
		writes[k] -= v
	}
	r.kubeWrites = writes
	signals, err := world.WebhookSignalCounts(ctx, w.WebhookMetricsURL)
	if err != nil {
		return nil, err
	}
	r.webhookSignals = signals.Minus(baseSignals)
	signalRPC, err := world.TemporalRequestLatency(ctx, w.WebhookMetricsURL, signalWithStart)
	if err != nil {
		return nil, err
	}
	r.signalRPC = signalRPC.Minus(baseSignalRPC)
	if r.histories, err = world.RunnerHistories(ctx, s.temporal, ns); err != nil {
		return nil, err
	}
	if r.poolHistories, err = world.Histories(ctx, s.temporal, "PoolWorkflow", "pool/"+ns+"/"); err != nil {
		return nil, err
	}
	if r.autoscalerHistories, err = world.Histories(ctx, s.temporal, "AutoscalerWorkflow", "hra/"+ns+"/"); err != nil {
		return nil, err
	}
	if r.histories.LongestID != "" {
		events, err := world.HistoryEventTypes(ctx, s.temporal, r.histories.LongestID, r.histories.LongestRunID)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(s.dir, fmt.Sprintf("runner-history-%d.txt", n))
		if err := os.WriteFile(path, []byte(r.histories.LongestID+"\n"+events), 0o644); err != nil {
			return nil, fmt.Errorf("write the longest runner history: %w", err)
		}
	}
	if r.actions, err = world.NamespaceActions(ctx, s.temporal, ns, start); err != nil {
		return nil, err
	}
	client, err := world.ClientActions(ctx, clientURLs...)
	if err != nil {
		return nil, err
	}
	r.actions.From = r.actions.From.Plus(client.Since(clientBase))
	r.workerRSS, r.workerCPU = w.Worker.PeakRSS(), w.Worker.CPU()-cpuWorker
	r.workerAnon, r.workerFile = w.Worker.RSSParts()
	r.webhookAnon, r.webhookFile = w.Webhook.RSSParts()
	r.allInOne = allInOne
	if !allInOne {
		r.webhookRSS, r.webhookCPU = w.Webhook.PeakRSS(), w.Webhook.CPU()-cpuWebhook
	}
	r.violations = len(w.Runners.Violations())

	if out, err := s.stack.Kubectl(ctx, "delete", "-n", ns, "hra,rdeploy", "--all", "--wait=false"); err != nil {
		return nil, errors.Join(err, errors.New(out))
	}
	return r, waitFor(ctx, 2*time.Minute, "the pool to drain after delete", func() bool { return w.Runners.LivePods() == 0 })
}

// signalWithStart is the Temporal call the webhook makes per group commit; its
// latency is the floor of the webhook's answer, which waits for it.
const signalWithStart = "SignalWithStartWorkflowExecution"
