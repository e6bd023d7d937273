package main

import (
	"context"
	"flag"

	"github.com/arcflow/arcflow/webhook"
)

// runWebhook is `arcflow webhook`: the GitHub webhook server.
func runWebhook(args []string) error {
	fs := flag.NewFlagSet("webhook", flag.ExitOnError)
	common, flags := addCommonFlags(fs), addWebhookFlags(fs)
	_ = fs.Parse(args)
	p, err := newProcess(common, false)
	if err != nil {
		return err
	}
	defer p.close()
	part, err := newWebhookPart(p, common, flags)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	if err := serveProfiling(ctx, common.profilingAddr, p.log); err != nil {
		return err
	}
	return part.run(ctx)
}

// webhookPart is the webhook server and its HRA index, built and ready to run.
type webhookPart struct {
	p      *process
	flags  *webhookFlags
	index  *webhook.Index
	server *webhook.Server
}

// newWebhookPart builds the server; a missing secret fails here, before anything
// runs.
func newWebhookPart(p *process, common *commonFlags, flags *webhookFlags) (*webhookPart, error) {
	index := webhook.NewIndex(p.dynamic, common.watchNamespace)
	srv, err := webhook.New(webhook.Config{
		Secret: []byte(flags.secret), Insecure: flags.insecure, MaxBodyBytes: flags.maxBody, Autoscaling: *common.autoscaling,
		ReadTimeout: flags.readTimeout, WriteTimeout: flags.writeTimeout, MaxConnections: flags.maxConnections,
		TemporalNamespace: common.temporal.namespace,
	}, index, p.temporal, p.reg, p.log)
	if err != nil {
		return nil, err
	}
	return &webhookPart{p: p, flags: flags, index: index, server: srv}, nil
}

// run fills the HRA index, then serves until ctx ends.
func (wp *webhookPart) run(ctx context.Context) error {
	if err := wp.index.Start(ctx); err != nil {
		return err
	}
	wp.p.log.Info("arcflow webhook listening", "addr", wp.flags.addr)
	return wp.server.ListenAndServe(ctx, wp.flags.addr)
}
