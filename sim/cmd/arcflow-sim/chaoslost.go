package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows/contract"
)

// chaosWorkflowCheckPeriod is the worker's --workflow-check-period in both
// runs: short, so that a store lost in a run of a few minutes is noticed within
// seconds rather than the default 30 s.
const chaosWorkflowCheckPeriod = 5 * time.Second

// lostStore is what the run saw of losing Temporal's store.
type lostStore struct {
	// at is when it was lost, since the workload started; lostAt the same as a time.
	at     time.Duration
	lostAt time.Time
	// pods are the runner pods in the namespace just before the loss.
	pods int
	// serverBack: the server answered again; rebuilt: every pool and autoscaler
	// workflow of the world ran again (0: not seen within the wait); both since lostAt.
	serverBack, rebuilt time.Duration
	// workflows are the pool and autoscaler workflows that must run again.
	workflows []string
	err       error
	// takenOver counts the runner workflows started with memo adoptedFrom=cluster.
	takenOver int
	// waitingThen: jobs queued before the loss and started after it, their
	// queued → started; queuedAfter: jobs queued after the loss.
	waitingThen, queuedAfter world.Percentiles
}

// loseStore loses Temporal's store once, at c.loseStoreAt after start, while no
// Temporal kill is under way, and follows the rebuild until every pool and
// autoscaler workflow of the namespace runs again.
func (r *chaosRun) loseStore(ctx context.Context, s *session, w *world.World, c chaosConfig, start time.Time) {
	t := time.NewTimer(time.Until(start.Add(c.loseStoreAt)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	r.temporalMu.Lock()
	defer r.temporalMu.Unlock()
	// The chaos world's RunnerDeployment and HRA, both named chaos.
	want := []string{contract.PoolWorkflowID(w.Namespace(), "RunnerDeployment", "chaos"), contract.AutoscalerWorkflowID(w.Namespace(), "chaos")}
	l := &lostStore{workflows: want}
	pods, err := runnerPods(ctx, w)
	if err != nil {
		l.err = fmt.Errorf("before losing the store: %w", err)
		r.setLost(l)
		return
	}
	l.pods = pods
	l.lostAt = time.Now()
	l.at = l.lostAt.Sub(start)
	r.setLost(l) // follow() needs lostAt from here on
	r.storeLost.Store(true)
	err = s.stack.LoseTemporalStore(ctx)
	back := time.Since(l.lostAt)
	var rebuilt time.Duration
	if err == nil {
		err = waitFor(ctx, 2*time.Minute, "every pool and autoscaler workflow running again", func() bool {
			running, err := runningControlWorkflows(ctx, s.temporal, w.Namespace())
			return err == nil && containsAll(running, want)
		})
		if err == nil {
			rebuilt = time.Since(l.lostAt)
		}
	}
	r.mu.Lock()
	l.serverBack, l.rebuilt, l.err = back, rebuilt, err
	r.mu.Unlock()
	if err != nil {
		step(fmt.Sprintf("lost Temporal's store %s into the run: %v", l.at.Round(time.Second), err))
		return
	}
	step(fmt.Sprintf("lost Temporal's store %s into the run with %d runner pods: the server answered after %s, %s running again after %s",
		l.at.Round(time.Second), l.pods, back.Round(100*time.Millisecond), strings.Join(want, " and "), rebuilt.Round(100*time.Millisecond)))
}

func (r *chaosRun) setLost(l *lostStore) {
	r.mu.Lock()
	r.lost = l
	r.mu.Unlock()
}

// lostSince says whether the store was lost after t: what Temporal held of a
// workflow followed since t is gone.
func (r *chaosRun) lostSince(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost != nil && !r.lost.lostAt.IsZero() && r.lost.lostAt.After(t)
}

// afterLoss reads, once the run is over, the runners taken over and the waits
// of the jobs started after the loss.
func (l *lostStore) afterLoss(ctx context.Context, tc client.Client, w *world.World) error {
	var waiting, after []time.Duration
	for _, j := range w.GitHub.Jobs() {
		switch {
		case !j.CreatedAt.Before(l.lostAt):
			after = append(after, j.StartedAt.Sub(j.CreatedAt))
		case !j.StartedAt.Before(l.lostAt):
			waiting = append(waiting, j.StartedAt.Sub(j.CreatedAt))
		}
	}
	l.waitingThen, l.queuedAfter = world.PercentilesOf(waiting), world.PercentilesOf(after)
	prefix := "runner/" + w.Namespace() + "/"
	var token []byte
	for {
		list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = 'RunnerWorkflow'", NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list runner workflows: %w", err)
		}
		for _, e := range list.GetExecutions() {
			from, ok := e.GetMemo().GetFields()["adoptedFrom"]
			if !ok || !strings.HasPrefix(e.GetExecution().GetWorkflowId(), prefix) {
				continue
			}
			var s string
			if err := converter.GetDefaultDataConverter().FromPayload(from, &s); err != nil {
				return fmt.Errorf("memo of %s: %w", e.GetExecution().GetWorkflowId(), err)
			}
			if s == "cluster" {
				l.takenOver++
			}
		}
		if token = list.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

// runningControlWorkflows lists the namespace's running pool and autoscaler
// workflows by ID.
func runningControlWorkflows(ctx context.Context, tc client.Client, namespace string) ([]string, error) {
	list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "(ArcflowKind = 'pool' OR ArcflowKind = 'autoscaler') AND ExecutionStatus = 'Running'",
	})
	if err != nil {
		return nil, fmt.Errorf("list running pool and autoscaler workflows: %w", err)
	}
	var ids []string
	for _, e := range list.GetExecutions() {
		id := e.GetExecution().GetWorkflowId()
		if strings.HasPrefix(id, "pool/"+namespace+"/") || strings.HasPrefix(id, "hra/"+namespace+"/") {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func containsAll(have, want []string) bool {
	set := make(map[string]bool, len(have))
	for _, id := range have {
		set[id] = true
	}
	for _, id := range want {
		if !set[id] {
			return false
		}
	}
	return true
}

func runnerPods(ctx context.Context, w *world.World) (int, error) {
	pods, err := w.Kube.CoreV1().Pods(w.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelRunner})
	if err != nil {
		return 0, fmt.Errorf("list runner pods: %w", err)
	}
	return len(pods.Items), nil
}

// defaultLoseStoreAt sets --lose-temporal-store-at when it was not given: half
// of the time the workload takes to queue its jobs, on the dev server; never on
// the cluster, whose store the stack cannot lose (localstack.LoseTemporalStore).
func (c *chaosConfig) defaultLoseStoreAt(fs *flag.FlagSet) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "lose-temporal-store-at" })
	cluster := localstack.TemporalServerFromEnv() == localstack.TemporalCluster
	switch {
	case given && cluster && c.loseStoreAt > 0:
		return errors.New("--lose-temporal-store-at: the stack loses the dev server's store only; run with TEMPORAL=dev or --lose-temporal-store-at 0")
	case given:
	case cluster:
		c.loseStoreAt, c.storeKept = 0, "not on the cluster: the stack can lose only the dev server's store"
	default:
		c.loseStoreAt = time.Duration(float64(c.jobs) / c.rate / 2 * float64(time.Second)).Round(time.Second)
	}
	return nil
}

func (c chaosConfig) loseStoreText() string {
	switch {
	case c.loseStoreAt > 0:
		return fmt.Sprintf("Temporal's store lost once, %s into the workload", c.loseStoreAt)
	case c.storeKept != "":
		return "Temporal's store not lost (" + c.storeKept + ")"
	default:
		return "Temporal's store not lost (--lose-temporal-store-at 0)"
	}
}

// lostCheck is the row saying the store was lost and the world's workflows
// ran again; only when a loss was asked for.
func (r *chaosRun) lostCheck() chaosCheck {
	name := "Temporal's store lost, and the pool's and the autoscaler's workflows running again"
	l := r.lost
	switch {
	case l == nil:
		return chaosCheck{name, false, "the run ended before the loss"}
	case l.err != nil:
		return chaosCheck{name, false, l.err.Error()}
	}
	return chaosCheck{name, l.rebuilt > 0, fmt.Sprintf("lost %s into the run; running again after %s", l.at.Round(time.Second), l.rebuilt.Round(100*time.Millisecond))}
}

// lostFigures are the table's rows about the lost store.
func (r *chaosRun) lostFigures(b *strings.Builder) {
	l := r.lost
	if l == nil || l.err != nil {
		return
	}
	fmt.Fprintf(b, "| Temporal's store lost: when, into the workload / server answering after / %s running again after | %s / %s / %s |\n",
		strings.Join(l.workflows, " and "), l.at.Round(time.Second), l.serverBack.Round(100*time.Millisecond), l.rebuilt.Round(100*time.Millisecond))
	fmt.Fprintf(b, "| runner pods at the loss / runners taken over (runner workflows with memo adoptedFrom=cluster) | %d / %d |\n", l.pods, l.takenOver)
	fmt.Fprintf(b, "| jobs queued before the loss and started after it: queued → started p50 / p95 / max (n) | %s |\n", withMax(l.waitingThen))
	fmt.Fprintf(b, "| jobs queued after the loss: queued → started p50 / p95 / max (n) | %s |\n", withMax(l.queuedAfter))
}

func withMax(p world.Percentiles) string {
	if p.N == 0 {
		return "none"
	}
	return fmt.Sprintf("%s / %s / %s (%d)", p.P50.Round(10*time.Millisecond), p.P95.Round(10*time.Millisecond), p.Max.Round(10*time.Millisecond), p.N)
}
