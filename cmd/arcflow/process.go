package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arcflow/arcflow/worker"
)

// process is what the parts of a long-running command share: one logger, one
// Prometheus registry, one Kubernetes client and one Temporal client. `arcflow
// all` runs the worker and the webhook on one of each.
type process struct {
	log      *slog.Logger
	reg      *prometheus.Registry
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	temporal client.Client
}

// newProcess builds the clients. With
// lazyTemporal the process starts while Temporal is unreachable (the webhook
// answers 503 meanwhile); otherwise it connects at once, as the worker needs.
func newProcess(c *commonFlags, lazyTemporal bool) (*process, error) {
	p := &process{log: newLogger(c.logLevel, c.logFormat), reg: newRegistry()}
	restConfig, err := kubeRESTConfig(c.kubeconfig)
	if err != nil {
		return nil, err
	}
	worker.NewKubernetesRequests(p.reg).Instrument(restConfig)
	if p.kube, err = kubernetes.NewForConfig(restConfig); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if p.dynamic, err = dynamic.NewForConfig(restConfig); err != nil {
		return nil, fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	topts, err := c.temporal.options(p.log)
	if err != nil {
		return nil, err
	}
	topts.MetricsHandler = worker.NewTemporalMetrics(p.reg)
	if lazyTemporal {
		if p.temporal, err = client.NewLazyClient(topts); err != nil {
			return nil, fmt.Errorf("temporal client: %w", err)
		}
		return p, nil
	}
	if p.temporal, err = client.Dial(topts); err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", c.temporal.address, err)
	}
	return p, nil
}

func (p *process) close() { p.temporal.Close() }

// kubeRESTConfig loads the kubeconfig, or the in-cluster config when it is empty.
// Both get the same rate limits: client-go's default of 5 requests a second would
// throttle a burst of runner pods.
func kubeRESTConfig(kubeconfig string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig == "" {
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}
