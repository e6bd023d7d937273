package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
)

// scaleOptions are the scale run's flags.
type scaleOptions struct {
	dir                            string
	rates                          []float64
	warmup, measure, grace         time.Duration
	timeScale                      float64
	register                       time.Duration
	namespaces, pools, maxReplicas int
	scaleDownDelay                 time.Duration
	limits                         scaleLimits
	histories, profile             bool
	keepStepping                   bool
	inMemory                       bool
	workers                        int
}

// runScale is issue 25's scale run: a fleet of 50 pools in 5 namespaces under
// Poisson arrivals whose rate steps up until jobs wait (queued -> started p99
// past --p99-limit), a delivery is refused, or the machine runs short of memory.
func runScale(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	var o scaleOptions
	rates := fs.String("rates", "0.5,1,2,5,10,20", "comma-separated arrival rates (jobs/s), one step each, in order")
	fs.StringVar(&o.dir, "dir", ".scale", "directory for the stack's state, logs and results (results.md, scale.svg)")
	fs.DurationVar(&o.warmup, "warmup", time.Minute, "unmeasured start of each step, for the live runners to settle at the new rate")
	fs.DurationVar(&o.measure, "measure", 2*time.Minute, "measured window of each step")
	fs.DurationVar(&o.grace, "grace", 15*time.Second, "after each window, how long the same rate runs on before the window's waits are read (a job not started by then counts its wait so far)")
	fs.Float64Var(&o.timeScale, "time-scale", 10, "divides every job duration (log-normal, median 2 min, p95 15 min, capped at 1 h), so a 2-core machine reaches a steady number of runners within a step; 1 is real time")
	fs.DurationVar(&o.register, "register", time.Second, "pod Running -> runner registered (not scaled)")
	fs.IntVar(&o.namespaces, "namespaces", 5, "Kubernetes namespaces the pools spread over")
	fs.IntVar(&o.pools, "pools", 50, "pools (RunnerDeployments with their HRAs; the last is a RunnerSet)")
	fs.IntVar(&o.maxReplicas, "max-replicas", 200, "maxReplicas of every HRA but the spill-over pool's and the RunnerSet's")
	fs.DurationVar(&o.scaleDownDelay, "scale-down-delay", 30*time.Second, "scaleDownDelaySecondsAfterScaleOut of every RunnerDeployment's HRA")
	fs.DurationVar(&o.limits.p99, "p99-limit", 5*time.Second, "stop stepping up once queued -> started p99 of a step passes this")
	freeMiB := fs.Int64("min-free-memory", 1024, "stop stepping up once the machine's MemAvailable falls under this many MiB")
	fs.BoolVar(&o.histories, "histories", true, "after the run, read every workflow history for Actions per step, the largest history and the busiest workflow's signals")
	fs.BoolVar(&o.profile, "profile", true, "build the worker with -tags profiling and save a CPU profile of it for each step's window (worker-cpu-<rate>.pprof)")
	fs.BoolVar(&o.keepStepping, "keep-stepping", false, "run every rate even after a step passed a limit (the stop column still says which limit), to see the whole curve on a noisy machine")
	fs.BoolVar(&o.inMemory, "temporal-memory", false, "run the dev server in memory instead of on its SQLite file (a best case)")
	fs.IntVar(&o.workers, "workers", 1, "arcflow worker processes: they share the task queue and elect one leader for the Kubernetes watchers (the CPU profile is the first's)")
	_ = fs.Parse(args)
	var err error
	if o.rates, err = parseRates(*rates); err != nil {
		return fmt.Errorf("--rates: %w", err)
	}
	if len(o.rates) == 0 {
		return errors.New("--rates: no rate given")
	}
	if o.workers < 1 {
		return errors.New("--workers: at least 1")
	}
	o.limits.minFreeMemory = *freeMiB << 20
	s, err := startSession(ctx, o.dir, sessionOptions{inMemory: o.inMemory, profiling: o.profile})
	if err != nil {
		return err
	}
	defer s.close()
	started := readCPUTimes()
	rows, runErr := scaleRun(ctx, s, o)
	if len(rows) == 0 {
		return runErr
	}
	return errors.Join(runErr, writeScaleResults(s, o, rows, started))
}

func scaleRun(ctx context.Context, s *session, o scaleOptions) ([]scaleRow, error) {
	fleet := world.ScaleFleet{Namespaces: o.namespaces, Pools: o.pools, Org: "scale-org", MaxReplicas: o.maxReplicas, ScaleDownDelaySeconds: int(o.scaleDownDelay.Seconds())}
	durations := world.LogNormalDurations{Median: 2 * time.Minute, P95: 15 * time.Minute, Cap: time.Hour, TimeScale: o.timeScale, Seed: 25}
	w, err := startScaleWorld(ctx, s, o, fleet, durations)
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()

	targets, weights := fleet.Targets(), fleet.Weights()
	pick := rand.New(rand.NewPCG(25, 0x5ca1e))
	arrivals := &world.PoissonArrivals{Seed: 25, Emit: func(n int) {
		w.Queue(fleet.Repository(), fmt.Sprintf("job-%d", n), world.JobLabels(fleet.Pick(pick, targets, weights)))
	}}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go arrivals.Run(runCtx)

	var rows []scaleRow
	for _, rate := range o.rates {
		step(fmt.Sprintf("scale: %g jobs/s (%v warm-up, %v measured)", rate, o.warmup, o.measure))
		arrivals.SetRate(rate)
		row, err := scaleStep(ctx, s, w, o, rate)
		if err != nil {
			row.stop = "error: " + err.Error()
			rows = append(rows, row)
			fmt.Print(scaleTable(rows[len(rows)-1:]))
			fmt.Print("\n" + splitTable(rows[len(rows)-1:]))
			return rows, fmt.Errorf("step %g jobs/s: %w", rate, err)
		}
		row.stop = stopReason(row, o.limits, world.MemAvailable())
		rows = append(rows, row)
		fmt.Print(scaleTable(rows[len(rows)-1:]))
		fmt.Print("\n" + splitTable(rows[len(rows)-1:]))
		if row.stop != "" && !o.keepStepping {
			break
		}
	}
	arrivals.SetRate(0)
	stop()
	if o.histories {
		step("reading every workflow history for Actions, the largest history and the busiest workflow")
		var windows []world.Window
		for _, r := range rows {
			windows = append(windows, r.window)
		}
		stats, runs, err := world.WindowHistories(ctx, s.temporal, fleet.NamespaceNames(), windows)
		if err != nil {
			return rows, fmt.Errorf("read histories: %w", err)
		}
		fmt.Printf("read %d workflow runs\n", runs)
		for i := range rows {
			rows[i].history = &stats[i]
		}
	}
	return rows, nil
}

// startScaleWorld starts one world over every namespace of the fleet, applies
// the fleet and waits until every HRA is accepted and the idle buffers are up.
func startScaleWorld(ctx context.Context, s *session, o scaleOptions, fleet world.ScaleFleet, durations world.LogNormalDurations) (*world.World, error) {
	namespaces := fleet.NamespaceNames()
	cfg := world.Config{
		Namespace: namespaces[0], Namespaces: namespaces, Dir: filepath.Join(s.dir, "scale"),
		RegisterDelay: o.register, JobDurations: durations.Of, Orgs: []string{fleet.Org}, Seed: 25,
		Workers: o.workers,
	}
	if o.profile {
		ports, err := localstack.FreePorts(1)
		if err != nil {
			return nil, err
		}
		s.profilingAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
		cfg.WorkerArgs = []string{"--profiling-addr=" + s.profilingAddr}
	}
	step(fmt.Sprintf("starting arcflow over %d namespaces and applying %d pools", len(namespaces), fleet.Pools))
	w, err := s.world(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The volumes outlive the run's stack directory only as API objects, which
	// go with the stack; nothing to remove.
	if _, err := world.OfferVolumes(ctx, w.Kube, world.RunnerSetClass, world.RunnerSetMax); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	for ns, manifest := range fleet.Manifests() {
		if err := w.ApplyIn(ctx, ns, manifest); err != nil {
			return nil, errors.Join(err, w.Stop())
		}
	}
	for _, ns := range namespaces {
		for _, hra := range fleet.PoolsIn(ns) {
			if err := s.waitAccepted(ctx, ns, hra); err != nil {
				return nil, errors.Join(fmt.Errorf("%s/%s: %w", ns, hra, err), w.Stop())
			}
		}
	}
	idle := 0
	for _, p := range fleet.PoolList() {
		idle += p.IdleRunners
	}
	if err := waitFor(ctx, 3*time.Minute, "the idle buffers registered", func() bool { return w.IdleRunners() >= idle }); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	return w, nil
}

func writeScaleResults(s *session, o scaleOptions, rows []scaleRow, started cpuTimes) error {
	title := fmt.Sprintf("Scale run on the %s, %s: 50 pools in %d namespaces, Poisson arrivals, log-normal jobs (median 2 min, p95 15 min) divided by %g", s.serverName(), workerCount(o.workers), o.namespaces, o.timeScale)
	svg := filepath.Join(s.dir, "scale.svg")
	short := fmt.Sprintf("arcflow scale run: %s, job durations ÷ %g", s.serverName(), o.timeScale)
	if err := os.WriteFile(svg, []byte(scalePlot(short, scalePanels(rows, o.limits.p99))), 0o644); err != nil {
		return fmt.Errorf("write the plot: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n", title)
	b.WriteString(scaleConditions(o))
	b.WriteString(scaleTable(rows))
	b.WriteString("\nWork split between the worker processes:\n\n")
	b.WriteString(splitTable(rows))
	fmt.Fprintf(&b, "\nPlot: %s\n", svg)
	fmt.Print(b.String())
	return writeReport(filepath.Join(s.dir, "results.md"), "scale run", b.String(), started)
}
