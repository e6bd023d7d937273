package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/arcflow/arcflow/internal/identity"
	"github.com/arcflow/arcflow/internal/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// process is what the parts of a long-running command share: one logger, one
// Prometheus registry, one Kubernetes REST config and dynamic client, and one
// Temporal client. `arcflow all` runs the worker and the webhook on one of each.
// The typed clientset is the worker's own (see newWorkerPart): creating it runs
// the constructors of every API group's client, and linking it maps about 19 MiB
// more of the binary into a process, so the webhook server, which reads custom
// resources through the dynamic client, is built without it (webhookonly).
type process struct {
	log        *slog.Logger
	reg        *prometheus.Registry
	restConfig *rest.Config
	dynamic    dynamic.Interface
	temporal   client.Client
}

// newProcess builds the clients. A webhook-only process dials Temporal lazily,
// so it starts, and answers 503, while Temporal is unreachable; a process that
// runs the worker connects at once.
func newProcess(c *commonFlags, withWorker bool) (*process, error) {
	p := &process{log: newLogger(c.logLevel, c.logFormat), reg: newRegistry()}
	setGCDefault()
	var err error
	if p.restConfig, err = kubeRESTConfig(c.kubeconfig, c.kubeQPS, c.kubeBurst); err != nil {
		return nil, err
	}
	telemetry.NewKubernetesRequests(p.reg).Instrument(p.restConfig)
	if p.dynamic, err = dynamic.NewForConfig(p.restConfig); err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	topts, err := c.temporal.options(p.log)
	if err != nil {
		return nil, err
	}
	topts.MetricsHandler = telemetry.NewTemporalMetrics(p.reg)
	if !withWorker {
		if p.temporal, err = client.NewLazyClient(topts); err != nil {
			return nil, fmt.Errorf("temporal client: %w", err)
		}
		return p, nil
	}
	// Temporal records this identity on each activity a worker takes; the
	// worker's liveness Lease carries the same (worker.Liveness).
	if topts.Identity, err = identity.Process(); err != nil {
		return nil, err
	}
	if p.temporal, err = client.Dial(topts); err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", c.temporal.address, err)
	}
	return p, nil
}

func (p *process) close() { p.temporal.Close() }

// defaultGCPercent is arcflow's GOGC when the environment sets none: the heap
// grows by half its live size between collections instead of doubling. Measured
// at 100 live runners, it took the worker's anonymous memory from 32.0 to 26.1 MiB
// and the webhook's from 14.7 to 13.4 MiB, with no more CPU than GOGC=100 over the
// same run (a live heap of about 12 MiB collects quickly).
const defaultGCPercent = 50

// setGCDefault applies defaultGCPercent unless GOGC is set; GOGC and GOMEMLIMIT
// from the environment are the Go runtime's own and always win.
func setGCDefault() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// Kubernetes client rate limits. client-go's default of 5 requests a second, or
// the 50 arcflow had, throttles a burst of runners: 100 new runners are 300 writes,
// which took 6 s at 50 a second on the local stack (the critical path of a 100-job
// burst). API Priority and Fairness on the API server still protects it.
const (
	defaultKubeQPS   = 100
	defaultKubeBurst = 300
)

// kubeRESTConfig loads the kubeconfig, or the in-cluster config when it is empty,
// with the client rate limits.
func kubeRESTConfig(kubeconfig string, qps, burst int) (*rest.Config, error) {
	if qps <= 0 || burst <= 0 {
		return nil, fmt.Errorf("--kube-api-qps %d and --kube-api-burst %d must both be positive", qps, burst)
	}
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	return cfg, nil
}

// signalContext ends on SIGINT or SIGTERM (Kubernetes stops a pod with SIGTERM).
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
