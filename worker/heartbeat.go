package worker

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// HeartbeatEvery is how often a running activity tells Temporal its worker is
// alive. The workflows give every activity a heartbeat timeout of a few of these
// (workflows.ActivityHeartbeatTimeout), so an activity whose worker was killed is
// retried on another replica seconds later instead of after its 30 s
// start-to-close timeout. Activities that finish within one interval, nearly all
// of them, send no heartbeat at all.
const HeartbeatEvery = time.Second

// heartbeats is a worker interceptor that heartbeats every activity that asks for
// heartbeats, in the background, while it runs. The activities themselves stay
// plain function calls: the heartbeat says the process is alive, which is what a
// crash makes false, not how far the call has got.
type heartbeats struct {
	interceptor.WorkerInterceptorBase
	every time.Duration
}

func (h *heartbeats) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &heartbeatingActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, every: h.every}
}

type heartbeatingActivity struct {
	interceptor.ActivityInboundInterceptorBase
	every time.Duration
}

func (a *heartbeatingActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if activity.GetInfo(ctx).HeartbeatTimeout <= 0 {
		return a.Next.ExecuteActivity(ctx, in)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(a.every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return a.Next.ExecuteActivity(ctx, in)
}
