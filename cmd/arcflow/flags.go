package main

import (
	"flag"
	"os"
	"time"

	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/webhook"
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

// webhookFlags are the flags of the GitHub webhook server.
type webhookFlags struct {
	addr                      string
	secret                    string
	insecure                  bool
	maxBody                   int64
	readTimeout, writeTimeout time.Duration
	maxConnections            int
}

func addWebhookFlags(fs *flag.FlagSet) *webhookFlags {
	w := &webhookFlags{}
	fs.StringVar(&w.addr, "webhook-addr", envOr("ARCFLOW_WEBHOOK_ADDR", ":8000"), "listen address of the webhook server")
	fs.StringVar(&w.secret, "github-webhook-secret-token", os.Getenv("GITHUB_WEBHOOK_SECRET_TOKEN"), "webhook secret (GITHUB_WEBHOOK_SECRET_TOKEN)")
	fs.BoolVar(&w.insecure, "insecure-skip-signature-check", false, "accept unsigned deliveries (local tests only)")
	fs.Int64Var(&w.maxBody, "max-body-bytes", 1<<20, "largest delivery accepted")
	fs.DurationVar(&w.readTimeout, "webhook-read-timeout", envDuration("ARCFLOW_WEBHOOK_READ_TIMEOUT", webhook.DefaultReadTimeout),
		"longest a delivery's headers and body may take to arrive before the connection is cut (GitHub sends 1 MiB in well under a second; raise it behind a slow proxy)")
	fs.DurationVar(&w.writeTimeout, "webhook-write-timeout", envDuration("ARCFLOW_WEBHOOK_WRITE_TIMEOUT", webhook.DefaultWriteTimeout),
		"longest from a delivery's headers to the end of its answer; must exceed --webhook-read-timeout plus the 10s wait for a durable signal")
	fs.IntVar(&w.maxConnections, "webhook-max-connections", envInt("ARCFLOW_WEBHOOK_MAX_CONNECTIONS", webhook.DefaultMaxConnections),
		"connections the webhook server holds open at once, which bounds the memory of bodies still arriving; more wait to be accepted (0: no cap)")
	return w
}
