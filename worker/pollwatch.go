package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// PollWatch gives a runner scale set's poll to a live worker as soon as the
// worker that holds it stops renewing its liveness Lease. The poll heartbeats
// rarely, so Temporal alone would take the poll's heartbeat timeout (2 min) to
// notice; the Lease says it within its duration (6 s). It runs in the leader.
type PollWatch struct {
	Kube      kubernetes.Interface
	Temporal  client.Client
	Namespace string
	// Every is how often the Leases are read (1 s when zero).
	Every time.Duration
	Log   *slog.Logger
}

// Run looks for expired liveness Leases until ctx ends.
func (p *PollWatch) Run(ctx context.Context) error {
	every := p.Every
	if every <= 0 {
		every = time.Second
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if err := p.check(ctx); err != nil && ctx.Err() == nil {
			p.Log.Warn("scale set polls of dead workers not checked", "error", err)
		}
	}
}

// check signals the listener of every poll held by a worker whose Lease
// expired, then deletes the Lease: the worker is gone.
func (p *PollWatch) check(ctx context.Context) error {
	leases, err := p.Kube.CoordinationV1().Leases(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelWorkerLiveness + "=true"})
	if err != nil {
		return fmt.Errorf("list worker liveness leases: %w", err)
	}
	now := time.Now()
	dead := map[string]string{} // identity -> lease name
	for _, l := range leases.Items {
		expiry, known := leaseExpiry(l.Spec)
		if known && l.Spec.HolderIdentity != nil && now.After(expiry) {
			dead[*l.Spec.HolderIdentity] = l.Name
		}
	}
	if len(dead) == 0 {
		return nil
	}
	if err := p.reassign(ctx, dead); err != nil {
		return err
	}
	for identity, name := range dead {
		p.Log.Info("worker gone: its liveness lease expired", "identity", identity)
		if err := p.Kube.CoordinationV1().Leases(p.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete the expired lease %s: %w", name, err)
		}
	}
	return nil
}

// reassign tells each running listener whose poll a dead worker holds.
func (p *PollWatch) reassign(ctx context.Context, dead map[string]string) error {
	query := fmt.Sprintf("%s = 'scaleset' AND ExecutionStatus = 'Running'", contract.SearchAttrKind.GetName())
	var token []byte
	for {
		page, err := p.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return fmt.Errorf("list scale set listeners: %w", err)
		}
		for _, ex := range page.Executions {
			id := ex.GetExecution().GetWorkflowId()
			desc, err := p.Temporal.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				return fmt.Errorf("describe %s: %w", id, err)
			}
			for _, pa := range desc.GetPendingActivities() {
				if pa.GetActivityType().GetName() != calls.PollScaleSet || pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
					continue
				}
				if _, gone := dead[pa.GetLastWorkerIdentity()]; !gone {
					continue
				}
				lost := contract.PollLost{ActivityID: pa.GetActivityId(), Worker: pa.GetLastWorkerIdentity()}
				if err := p.Temporal.SignalWorkflow(ctx, id, "", contract.SignalPollLost, lost); err != nil {
					return fmt.Errorf("signal %s: %w", id, err)
				}
				p.Log.Info("scale set poll given to a live worker", "listener", id, "deadWorker", lost.Worker)
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}
