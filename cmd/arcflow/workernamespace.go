//go:build !webhookonly

package main

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
)

// namespaceCheckMax bounds the wait between two looks for the namespace.
const namespaceCheckMax = 30 * time.Second

// awaitNamespace returns true once Temporal serves the worker's namespace,
// with --setup-temporal once it has registered it and the search attributes
// (or could not, but the namespace exists), and false if ctx ends before.
// The SDK's worker refuses to start in a missing namespace, so without this
// wait the worker would crash-loop and no resource would say why.
func (wp *workerPart) awaitNamespace(ctx context.Context) bool {
	namespace, log := wp.common.temporal.namespace, wp.p.log
	wait := time.Second
	for {
		if wp.flags.setupTemporal {
			setupCtx, cancel := context.WithTimeout(ctx, time.Minute)
			lines, err := setUpTemporal(setupCtx, wp.p.temporal, namespace, defaultNamespaceRetention)
			cancel()
			if err == nil {
				log.Info("Temporal is set up for arcflow", "namespace", namespace, "done", lines)
				return true
			}
			// Temporal Cloud, or an identity without Namespace Admin, refuses
			// the setup: a namespace made by hand is enough to start, and the
			// resources name any search attribute still missing.
			log.Error("cannot set up Temporal for arcflow", "namespace", namespace, "error", err)
		}
		_, err := wp.p.temporal.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		var missing *serviceerror.NamespaceNotFound
		switch {
		case err == nil:
			return true
		case errors.As(err, &missing):
			log.Error("Temporal has no namespace for arcflow: create it and run `arcflow setup`, or start the worker with --setup-temporal; the resources say so meanwhile",
				"namespace", namespace, "retry_in", wait)
		default:
			log.Warn("cannot reach Temporal; trying again", "namespace", namespace, "retry_in", wait, "error", err)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, namespaceCheckMax)
	}
}
