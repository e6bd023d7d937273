package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/webhook"
	"github.com/arcflow/arcflow/worker"
)

// runWebhook is `arcflow webhook`: the GitHub webhook server.
func runWebhook(args []string) error {
	fs := flag.NewFlagSet("webhook", flag.ExitOnError)
	addr := fs.String("webhook-addr", envOr("ARCFLOW_WEBHOOK_ADDR", ":8000"), "listen address")
	secret := fs.String("github-webhook-secret-token", os.Getenv("GITHUB_WEBHOOK_SECRET_TOKEN"), "webhook secret (GITHUB_WEBHOOK_SECRET_TOKEN)")
	insecure := fs.Bool("insecure-skip-signature-check", false, "accept unsigned deliveries (local tests only)")
	maxBody := fs.Int64("max-body-bytes", 1<<20, "largest delivery accepted")
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path; empty means in-cluster")
	temporalFlags := addTemporalFlags(fs)
	watchNS := fs.String("watch-namespace", "", "match HRAs of only this namespace (default: all)")
	autoscaling := autoscalingFlags(fs)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text or json")
	_ = fs.Parse(args)
	log := newLogger(*logLevel, *logFormat)

	restConfig, err := kubeRESTConfig(*kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("kubernetes dynamic client: %w", err)
	}
	// Lazy: the server starts, and answers 503, while Temporal is unreachable.
	reg := newRegistry()
	topts, err := temporalFlags.options(log)
	if err != nil {
		return err
	}
	topts.MetricsHandler = worker.NewTemporalMetrics(reg)
	tc, err := client.NewLazyClient(topts)
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	index := webhook.NewIndex(dyn, *watchNS)
	if err := index.Start(ctx); err != nil {
		return err
	}
	srv, err := webhook.New(webhook.Config{
		Secret: []byte(*secret), Insecure: *insecure, MaxBodyBytes: *maxBody, Autoscaling: *autoscaling,
	}, index, tc, reg, log)
	if err != nil {
		return err
	}
	log.Info("arcflow webhook listening", "addr", *addr)
	return srv.ListenAndServe(ctx, *addr)
}
