package main

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// After Temporal restarts, two waits in the SDK's defaults stood between its
// return and arcflow's work going on (the e2e outage test's worker log): the
// connection's reconnect backoff, capped at 10 s, and each task poller's own
// backoff after failed polls, also up to 10 s, which the SDK does not let a
// caller set. temporalReturnDialOptions shortens the first and sidesteps the
// second.
func temporalReturnDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		// One connection attempt a second at most while Temporal is away: a
		// refused connection costs nothing, and the return is noticed within
		// a second. MinConnectTimeout is the SDK's: a slow handshake is not a
		// down server.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 200 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 20 * time.Second,
		}),
		grpc.WithChainUnaryInterceptor(pollsWaitForConnection),
	}
}

// pollsWaitForConnection makes a task poll wait for the connection to be up,
// within the poll's own deadline (about a minute), instead of failing at once
// while it is down. A poll that fails is retried only after the poller's
// backoff, which grows to 10 s during an outage; a poll that waits goes the
// moment the connection is back.
func pollsWaitForConnection(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if isTaskPoll(method) {
		opts = append(opts, grpc.WaitForReady(true))
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// isTaskPoll reports whether a WorkflowService method is a worker's long poll
// for tasks (PollWorkflowTaskQueue, PollActivityTaskQueue, PollNexusTaskQueue).
func isTaskPoll(method string) bool {
	name := method[strings.LastIndex(method, "/")+1:]
	return strings.HasPrefix(name, "Poll") && strings.HasSuffix(name, "TaskQueue")
}
