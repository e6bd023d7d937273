package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/arcflow/arcflow/workflows/contract"
)

// Group commit: Temporal applies the signals of one workflow one after another, so
// a burst of deliveries for one autoscaler would wait in line for as many signals.
// Instead, the deliveries that arrive while a signal to their autoscaler is in
// flight queue up, and the next signal carries all of them. A lone delivery is
// signalled at once (no batching window), and each delivery is answered only when
// the signal that carries it is durable.

const (
	// maxBatchEvents bounds the events of one signal.
	maxBatchEvents = 256
	// maxBatchBytes keeps a signal well under Temporal's 2 MB payload limit, with
	// room for the start input that signal-with-start carries beside it.
	maxBatchBytes = 1 << 20
)

// autoscalerStart is how to start an autoscaler that is not running yet.
type autoscalerStart struct {
	options client.StartWorkflowOptions
	input   contract.AutoscalerStart
}

// queuedDelivery is one delivery waiting for the signal that carries its event.
type queuedDelivery struct {
	ctx    context.Context // the request's: once done, nobody waits for the answer
	event  contract.JobEvent
	size   int
	start  autoscalerStart
	result chan error // buffered: the lane never blocks on a caller that left
}

// lane is the queue of one autoscaler; it exists while a signal to it is in flight.
type lane struct {
	queue []*queuedDelivery
}

// groupCommitter sends job events to autoscaler workflows, one signal per
// autoscaler at a time, each carrying everything that queued meanwhile.
type groupCommitter struct {
	temporal  Signaler
	timeout   time.Duration
	maxEvents int
	maxBytes  int
	metrics   *metrics

	mu    sync.Mutex
	lanes map[string]*lane // by workflow ID
}

func newGroupCommitter(temporal Signaler, timeout time.Duration, m *metrics) *groupCommitter {
	return &groupCommitter{temporal: temporal, timeout: timeout, maxEvents: maxBatchEvents, maxBytes: maxBatchBytes,
		metrics: m, lanes: map[string]*lane{}}
}

// Submit queues ev for the autoscaler workflowID and waits until the signal that
// carries it is durable (nil), failed (its error), or ctx ends (ctx.Err()). An
// event still queued when ctx ends is not sent: its sender got no 2xx and will
// redeliver.
func (g *groupCommitter) Submit(ctx context.Context, workflowID string, ev contract.JobEvent, start autoscalerStart) error {
	encoded, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode job event: %w", err)
	}
	d := &queuedDelivery{ctx: ctx, event: ev, size: len(encoded), start: start, result: make(chan error, 1)}
	g.mu.Lock()
	l, busy := g.lanes[workflowID]
	if !busy {
		l = &lane{}
		g.lanes[workflowID] = l
	}
	l.queue = append(l.queue, d)
	g.mu.Unlock()
	if !busy {
		go g.drain(workflowID, l)
	}
	select {
	case err := <-d.result:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain signals the lane's queue batch after batch until it is empty, then
// retires the lane.
func (g *groupCommitter) drain(workflowID string, l *lane) {
	for {
		batch := g.next(workflowID, l)
		if len(batch) == 0 {
			return
		}
		err := g.signal(workflowID, batch)
		for _, d := range batch {
			d.result <- err
		}
	}
}

// next takes the deliveries the next signal carries, in arrival order, skipping
// those nobody waits for any more. With none left it removes the lane, so the
// next delivery for this autoscaler starts a new one.
func (g *groupCommitter) next(workflowID string, l *lane) []*queuedDelivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	var batch []*queuedDelivery
	size, taken := 0, 0
	for _, d := range l.queue {
		if len(batch) == g.maxEvents || (len(batch) > 0 && size+d.size > g.maxBytes) {
			break
		}
		taken++
		if d.ctx.Err() != nil {
			continue
		}
		batch = append(batch, d)
		size += d.size
	}
	l.queue = append([]*queuedDelivery(nil), l.queue[taken:]...)
	if len(batch) == 0 {
		delete(g.lanes, workflowID)
	}
	return batch
}

// signal sends one batch: a lone event as a `job` signal, exactly as before group
// commit, several as one `jobs` signal. The newest delivery's start options win,
// as they come from the newest view of the HRA.
func (g *groupCommitter) signal(workflowID string, batch []*queuedDelivery) error {
	name, arg := contract.SignalJob, any(batch[0].event)
	if len(batch) > 1 {
		events := make([]contract.JobEvent, len(batch))
		for i, d := range batch {
			events[i] = d.event
		}
		name, arg = contract.SignalJobs, events
	}
	start := batch[len(batch)-1].start
	// Not any one request's context: a caller that leaves must not fail the others.
	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	began := time.Now()
	_, err := g.temporal.SignalWithStartWorkflow(ctx, workflowID, name, arg, start.options, contract.AutoscalerWorkflowType, start.input)
	g.metrics.signal.Observe(time.Since(began).Seconds())
	g.metrics.signalEvents.Observe(float64(len(batch)))
	result := "accepted"
	if err != nil {
		result = "failed"
		err = fmt.Errorf("signal %s to %s carrying %d events: %w", name, workflowID, len(batch), err)
	}
	g.metrics.signals.WithLabelValues(name, result).Inc()
	return err
}
