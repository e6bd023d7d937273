//go:build !webhookonly

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/internal/credentials"
	"github.com/arcflow/arcflow/internal/identity"
	"github.com/arcflow/arcflow/worker"
)

// runWorker is `arcflow worker`: the Temporal worker with every workflow and
// activity, and, in the leader replica, the Kubernetes watchers.
func runWorker(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	common, flags := addCommonFlags(fs), addWorkerFlags(fs)
	_ = fs.Parse(args)
	flags.finish()
	p, err := newProcess(common, true)
	if err != nil {
		return err
	}
	defer p.close()
	part, err := newWorkerPart(p, common, flags)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if err := serveMetrics(ctx, flags.metricsAddr, p.reg, p.log); err != nil {
		return err
	}
	if err := serveProfiling(ctx, common.profilingAddr, p.log); err != nil {
		return err
	}
	return part.run(ctx)
}

// workerPart is the Temporal worker and the Kubernetes watchers, built and ready
// to run.
type workerPart struct {
	p       *process
	kube    kubernetes.Interface
	common  *commonFlags
	flags   *workerFlags
	gh      *github.Client
	creds   *credentials.Resolver
	worker  *worker.Worker
	metrics *worker.ResourceMetrics
	arc     *worker.ARCController
}

// newWorkerPart builds the worker; a bad GitHub setting fails here, before
// anything runs.
func newWorkerPart(p *process, common *commonFlags, flags *workerFlags) (*workerPart, error) {
	ghConfig, err := workerGitHubConfig(p.log)
	if err != nil {
		return nil, err
	}
	transport, err := github.NewTransport(flags.githubCAFile)
	if err != nil {
		return nil, err
	}
	ghOptions := github.Options{Metrics: github.NewMetrics(p.reg), Transport: transport,
		RunnerListInterval: flags.githubListInterval, BudgetShare: flags.githubBudgetShare}
	gh, err := github.New(ghConfig, ghOptions)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(p.restConfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	arc, err := worker.NewARCController(kube, flags.arcLease, flags.arcPodSelector)
	if err != nil {
		return nil, err
	}
	if arc != nil {
		arc.Warn, arc.WatchNamespace = p.log.Warn, common.watchNamespace
	}
	// One client per githubAPICredentialsFrom Secret, beside the worker's own.
	creds := &credentials.Resolver{Kube: kube, Worker: ghConfig, Options: ghOptions, Log: p.log}
	// One Actions service client per credential set, for runner scale sets.
	scaleSets := &scaleset.Clients{Resolve: func(ctx context.Context, ref string) (*github.Client, error) {
		if ref == "" {
			return gh, nil
		}
		return creds.For(ctx, ref)
	}, Transport: transport, Version: buildVersion()}
	worker.SetStickyCacheSize(flags.stickyCacheSize)
	w := worker.New(p.temporal,
		&activities.Kubernetes{Client: kube, Dynamic: p.dynamic, Tokens: gh, Credentials: creds, Defaults: flags.podDefaults,
			LostJobs: activities.NewLostJobMetrics(p.reg), ScaleSets: scaleSets.For},
		&activities.GitHub{Registry: gh, Jobs: gh, Reruns: gh, Credentials: creds},
		&activities.ScaleSets{Clients: scaleSets.For, Metrics: activities.NewScaleSetMetrics(p.reg)}, worker.Settings{GroupRunnerEnds: flags.groupRunnerEnds,
			Revisions: &worker.WorkerRevisions{Kube: kube, Namespace: flags.election.Namespace, Log: p.log}})
	return &workerPart{p: p, kube: kube, common: common, flags: flags, gh: gh, creds: creds, worker: w, metrics: worker.NewResourceMetrics(p.reg), arc: arc}, nil
}

// workerGitHubConfig reads the worker's own GitHub credentials from ARC's
// environment names. Like ARC, it uses GITHUB_TOKEN when the GITHUB_APP_*
// variables are set too (one Secret with both keys, mounted as env), and
// warns, naming the variables, never their values.
func workerGitHubConfig(log *slog.Logger) (github.Config, error) {
	cfg, err := github.ConfigFromEnv()
	if err != nil {
		return github.Config{}, fmt.Errorf("github credentials: %w", err)
	}
	cfg, both := credentials.TokenOverApp(cfg)
	if both {
		log.Warn("GITHUB_TOKEN and GITHUB_APP_* are both set (the Secret holds github_token and GitHub App keys); arcflow uses the token, as ARC does, and ignores the App keys")
	}
	return cfg, nil
}

// run polls Temporal and, while leading, watches Kubernetes, until ctx ends.
// The watchers start at once: while Temporal lacks arcflow's namespace they
// say so on every resource, and the Temporal worker starts once it exists.
func (wp *workerPart) run(ctx context.Context) error {
	log, ns := wp.p.log, wp.common.watchNamespace
	log.Info("arcflow worker starting", "temporal", wp.common.temporal.address, "namespace", wp.common.temporal.namespace)
	watching := make(chan error, 1)
	go func() {
		watching <- worker.RunWhileLeader(ctx, wp.kube, wp.flags.election, log, func(ctx context.Context) {
			pods := worker.NewPodWatcher(wp.kube, wp.p.temporal, ns, log)
			resources := &worker.ResourceWatcher{
				Kube: wp.kube, Dynamic: wp.p.dynamic, Temporal: wp.p.temporal, RunnerURL: wp.gh.RunnerURL(),
				Namespace: ns, Autoscaling: *wp.common.autoscaling, Log: log, Metrics: wp.metrics,
				RunnerTimings: wp.flags.runnerTimings, Credentials: wp.creds, VolumeIdleTimeout: wp.flags.volumeIdleTimeout,
				PoolDeletionGrace: wp.flags.poolDeletionGrace, PoolStatusInterval: wp.flags.poolStatusInterval, WorkflowCheckPeriod: wp.flags.workflowCheckPeriod,
				ARC: wp.arc, Budgets: wp.budget, TemporalNamespace: wp.common.temporal.namespace,
			}
			polls := &worker.PollWatch{Kube: wp.kube, Temporal: wp.p.temporal, Namespace: wp.flags.election.Namespace, Log: log}
			errs := make(chan error, 3)
			go func() { errs <- pods.Run(ctx, 4) }()
			go func() { errs <- resources.Run(ctx) }()
			go func() { errs <- polls.Run(ctx) }()
			for range 3 {
				if err := <-errs; err != nil {
					log.Error("watcher stopped", "error", err)
				}
			}
		})
	}()
	self, err := identity.Process()
	if err != nil {
		return err
	}
	liveness := &worker.Liveness{Kube: wp.kube, Namespace: wp.flags.election.Namespace, Identity: self, Duration: wp.flags.livenessDuration, Log: log}
	go func() { _ = liveness.Run(ctx) }()
	if !wp.awaitNamespace(ctx) {
		return <-watching
	}
	if err := wp.worker.Start(); err != nil {
		return fmt.Errorf("start Temporal worker: %w", err)
	}
	defer wp.worker.Stop()
	log.Info("arcflow worker started")
	return <-watching
}

// budget is the GitHub client whose call budget a credential ref spends: the
// worker's own for "", else the client of that githubAPICredentialsFrom Secret.
func (wp *workerPart) budget(ctx context.Context, ref string) (worker.Throttler, error) {
	if ref == "" {
		return wp.gh, nil
	}
	client, err := wp.creds.For(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("github credentials %s: %w", ref, err)
	}
	return client, nil
}
