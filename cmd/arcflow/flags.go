package main

import (
	"flag"
	"os"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/worker"
)

// The long-running commands share their flag definitions: `worker` takes the
// common and worker flags, `webhook` the common and webhook flags, and `all` the
// three sets, each defined once here.

// commonFlags are the flags of every long-running command.
type commonFlags struct {
	kubeconfig          string
	kubeQPS, kubeBurst  int
	temporal            *temporalFlags
	watchNamespace      string
	autoscaling         *hraspec.Options
	logLevel, logFormat string
	profilingAddr       string
}

func addCommonFlags(fs *flag.FlagSet) *commonFlags {
	c := &commonFlags{}
	fs.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path; empty means in-cluster")
	fs.IntVar(&c.kubeQPS, "kube-api-qps", envInt("ARCFLOW_KUBE_API_QPS", defaultKubeQPS),
		"Kubernetes API requests per second, sustained (each new runner costs three writes: its token Secret, its pod, the Secret's owner)")
	fs.IntVar(&c.kubeBurst, "kube-api-burst", envInt("ARCFLOW_KUBE_API_BURST", defaultKubeBurst),
		"Kubernetes API requests allowed at once above --kube-api-qps (the default covers a burst of 100 new runners)")
	c.temporal = addTemporalFlags(fs)
	fs.StringVar(&c.watchNamespace, "watch-namespace", "", "watch, and match HRAs of, only this namespace (default: all)")
	c.autoscaling = autoscalingFlags(fs)
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json")
	fs.StringVar(&c.profilingAddr, "profiling-addr", os.Getenv("ARCFLOW_PROFILING_ADDR"), "address of Go's /debug/pprof/ profiles (empty, the default, disables them; needs a build with -tags profiling)")
	return c
}

// workerFlags are the flags of the Temporal worker and the Kubernetes watchers.
type workerFlags struct {
	podDefaults               activities.PodDefaults
	commonLabels, pullSecrets string
	election                  worker.LeaderElection
	metricsAddr               string
	stickyCacheSize           int
}

func addWorkerFlags(fs *flag.FlagSet) *workerFlags {
	w := &workerFlags{podDefaults: activities.DefaultPodDefaults()}
	d := &w.podDefaults
	fs.StringVar(&d.RunnerImage, "runner-image", d.RunnerImage, "default runner image")
	fs.StringVar(&d.DockerImage, "docker-image", d.DockerImage, "docker sidecar image")
	fs.StringVar(&d.DockerGID, "docker-gid", d.DockerGID, "docker group ID in the sidecar")
	fs.StringVar(&d.RegistryMirror, "docker-registry-mirror", "", "default docker registry mirror")
	fs.StringVar(&w.commonLabels, "common-runner-labels", "", "comma-separated labels added to every runner")
	fs.StringVar(&w.pullSecrets, "runner-image-pull-secret", "", "comma-separated image pull secrets of runner pods")
	e := &w.election
	fs.BoolVar(&e.Enabled, "enable-leader-election", false, "run the Kubernetes watchers in one replica at a time")
	fs.StringVar(&e.ID, "leader-election-id", "arcflow", "name of the leader-election Lease")
	fs.StringVar(&e.Namespace, "leader-election-namespace", envOr("POD_NAMESPACE", "default"), "namespace of the Lease")
	fs.DurationVar(&e.LeaseDuration, "leader-election-lease-duration", envDuration("ARCFLOW_LEASE_DURATION", worker.DefaultLeaseDuration),
		"how long the leader's Lease holds unrenewed: a killed leader's watchers move to another replica after it (renewed every tenth of it)")
	fs.StringVar(&w.metricsAddr, "metrics-addr", envOr("ARCFLOW_METRICS_ADDR", ":8080"), "address of the Prometheus /metrics and /healthz endpoint (empty disables it)")
	fs.IntVar(&w.stickyCacheSize, "sticky-workflow-cache-size", envInt("ARCFLOW_STICKY_WORKFLOW_CACHE_SIZE", worker.DefaultStickyCacheSize),
		"workflows kept in memory between tasks; more than are live costs nothing, fewer replays histories")
	return w
}

// finish derives what the parsed flags imply.
func (w *workerFlags) finish() {
	w.podDefaults.CommonLabels, w.podDefaults.PullSecrets = splitList(w.commonLabels), splitList(w.pullSecrets)
	w.election.RenewDeadline = w.election.LeaseDuration * 2 / 3
	w.election.RetryPeriod = worker.RetryPeriod(w.election.LeaseDuration)
}

// webhookFlags are the flags of the GitHub webhook server.
type webhookFlags struct {
	addr     string
	secret   string
	insecure bool
	maxBody  int64
}

func addWebhookFlags(fs *flag.FlagSet) *webhookFlags {
	w := &webhookFlags{}
	fs.StringVar(&w.addr, "webhook-addr", envOr("ARCFLOW_WEBHOOK_ADDR", ":8000"), "listen address of the webhook server")
	fs.StringVar(&w.secret, "github-webhook-secret-token", os.Getenv("GITHUB_WEBHOOK_SECRET_TOKEN"), "webhook secret (GITHUB_WEBHOOK_SECRET_TOKEN)")
	fs.BoolVar(&w.insecure, "insecure-skip-signature-check", false, "accept unsigned deliveries (local tests only)")
	fs.Int64Var(&w.maxBody, "max-body-bytes", 1<<20, "largest delivery accepted")
	return w
}
