//go:build !webhookonly

package main

import (
	"context"
	"flag"

	"golang.org/x/sync/errgroup"
)

// runAll is `arcflow all`: the worker and the webhook server in one process, for
// small installations and local runs. They share one Kubernetes client, one
// Temporal client and one Prometheus registry, served on --metrics-addr (the
// webhook's port serves the same registry). When either part stops, the other is
// stopped too, so a half-working process does not stay up.
func runAll(args []string) error {
	fs := flag.NewFlagSet("all", flag.ExitOnError)
	common, workerFlags, webhookFlags := addCommonFlags(fs), addWorkerFlags(fs), addWebhookFlags(fs)
	_ = fs.Parse(args)
	workerFlags.finish()
	p, err := newProcess(common, true)
	if err != nil {
		return err
	}
	defer p.close()
	workerPart, err := newWorkerPart(p, common, workerFlags)
	if err != nil {
		return err
	}
	webhookPart, err := newWebhookPart(p, common, webhookFlags)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if err := serveMetrics(ctx, workerFlags.metricsAddr, p.reg, p.log); err != nil {
		return err
	}
	if err := serveProfiling(ctx, common.profilingAddr, p.log); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	ctx, stopBoth := context.WithCancel(ctx)
	defer stopBoth()
	for _, run := range []func(context.Context) error{workerPart.run, webhookPart.run} {
		g.Go(func() error {
			defer stopBoth()
			return run(ctx)
		})
	}
	return g.Wait()
}
