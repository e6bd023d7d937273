package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/worker"
)

// runWorker is `arcflow worker`: the Temporal worker with every workflow and
// activity, and, in the leader replica, the Kubernetes watchers.
func runWorker(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path; empty means in-cluster")
	temporalFlags := addTemporalFlags(fs)
	defaults := activities.DefaultPodDefaults()
	fs.StringVar(&defaults.RunnerImage, "runner-image", defaults.RunnerImage, "default runner image")
	fs.StringVar(&defaults.DockerImage, "docker-image", defaults.DockerImage, "docker sidecar image")
	fs.StringVar(&defaults.DockerGID, "docker-gid", defaults.DockerGID, "docker group ID in the sidecar")
	fs.StringVar(&defaults.RegistryMirror, "docker-registry-mirror", "", "default docker registry mirror")
	commonLabels := fs.String("common-runner-labels", "", "comma-separated labels added to every runner")
	pullSecrets := fs.String("runner-image-pull-secret", "", "comma-separated image pull secrets of runner pods")
	watchNS := fs.String("watch-namespace", "", "watch only this namespace (default: all)")
	election := worker.LeaderElection{}
	fs.BoolVar(&election.Enabled, "enable-leader-election", false, "run the Kubernetes watchers in one replica at a time")
	fs.StringVar(&election.ID, "leader-election-id", "arcflow", "name of the leader-election Lease")
	fs.StringVar(&election.Namespace, "leader-election-namespace", envOr("POD_NAMESPACE", "default"), "namespace of the Lease")
	fs.DurationVar(&election.LeaseDuration, "leader-election-lease-duration", envDuration("ARCFLOW_LEASE_DURATION", 15*time.Second), "lease duration")
	autoscaling := autoscalingFlags(fs)
	metricsAddr := fs.String("metrics-addr", envOr("ARCFLOW_METRICS_ADDR", ":8080"), "address of the Prometheus /metrics endpoint (empty disables it)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text or json")
	_ = fs.Parse(args)
	defaults.CommonLabels, defaults.PullSecrets = splitList(*commonLabels), splitList(*pullSecrets)
	election.RenewDeadline = election.LeaseDuration * 2 / 3
	election.RetryPeriod = election.LeaseDuration / 5
	log := newLogger(*logLevel, *logFormat)

	ghConfig, err := github.ConfigFromEnv()
	if err != nil {
		return err
	}
	reg := newRegistry()
	gh, err := github.New(ghConfig, github.Options{Metrics: github.NewMetrics(reg)})
	if err != nil {
		return err
	}
	restConfig, err := kubeRESTConfig(*kubeconfig)
	if err != nil {
		return err
	}
	worker.NewKubernetesRequests(reg).Instrument(restConfig)
	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	topts, err := temporalFlags.options(log)
	if err != nil {
		return err
	}
	topts.MetricsHandler = worker.NewTemporalMetrics(reg)
	tc, err := client.Dial(topts)
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", temporalFlags.address, err)
	}
	defer tc.Close()
	resourceMetrics := worker.NewResourceMetrics(reg)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveMetrics(ctx, *metricsAddr, reg, log); err != nil {
		return err
	}

	w := worker.New(tc,
		&activities.Kubernetes{Client: kube, Dynamic: dyn, Tokens: gh, Defaults: defaults},
		&activities.GitHub{Registry: gh, Jobs: gh})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start Temporal worker: %w", err)
	}
	defer w.Stop()
	log.Info("arcflow worker started", "temporal", temporalFlags.address, "namespace", temporalFlags.namespace)

	return worker.RunWhileLeader(ctx, kube, election, log, func(ctx context.Context) {
		pods := worker.NewPodWatcher(kube, tc, *watchNS, log)
		resources := &worker.ResourceWatcher{Kube: kube, Dynamic: dyn, Temporal: tc, RunnerURL: gh.RunnerURL(), Namespace: *watchNS, Autoscaling: *autoscaling, Log: log, Metrics: resourceMetrics}
		errs := make(chan error, 2)
		go func() { errs <- pods.Run(ctx, 4) }()
		go func() { errs <- resources.Run(ctx) }()
		for range 2 {
			if err := <-errs; err != nil {
				log.Error("watcher stopped", "error", err)
			}
		}
	})
}

func kubeRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}
