package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/arcflow/arcflow/workflows/contract"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// signalCall is one signal the gated signaller received; the test answers it.
type signalCall struct {
	id, name string
	events   []contract.JobEvent
	answer   chan error
}

// gatedSignaller stands in for Temporal: every signal waits until the test
// answers it, so the test decides what is in flight.
type gatedSignaller struct {
	calls chan signalCall
}

func newGatedSignaller() *gatedSignaller { return &gatedSignaller{calls: make(chan signalCall, 64)} }

func (g *gatedSignaller) SignalWithStartWorkflow(ctx context.Context, id, name string, arg any, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	call := signalCall{id: id, name: name, answer: make(chan error, 1)}
	switch v := arg.(type) {
	case contract.JobEvent:
		call.events = []contract.JobEvent{v}
	case []contract.JobEvent:
		call.events = v
	default:
		return nil, fmt.Errorf("unexpected signal argument %T", arg)
	}
	g.calls <- call
	select {
	case err := <-call.answer:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next waits for the next signal.
func (g *gatedSignaller) next(t *testing.T) signalCall {
	t.Helper()
	select {
	case call := <-g.calls:
		return call
	case <-time.After(10 * time.Second):
		t.Fatal("no signal was sent")
		return signalCall{}
	}
}

// none checks that no signal is waiting to be answered.
func (g *gatedSignaller) none(t *testing.T) {
	t.Helper()
	select {
	case call := <-g.calls:
		t.Fatalf("unexpected signal %s to %s with %d events", call.name, call.id, len(call.events))
	default:
	}
}

func newTestCommitter(temporal Signaler) *groupCommitter {
	return newGroupCommitter(temporal, 10*time.Second, newMetrics(prometheus.NewRegistry()))
}

// queued is how many deliveries wait behind the signal in flight to workflowID.
func (g *groupCommitter) queued(workflowID string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.lanes[workflowID]; l != nil {
		return len(l.queue)
	}
	return 0
}

func (g *groupCommitter) laneCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lanes)
}

// submission is one Submit running in the background.
type submission struct {
	event  contract.JobEvent
	cancel context.CancelFunc
	done   chan error
}

// submit starts a delivery of job id to workflowID; with want > 0 it waits until
// the delivery is the want-th in the queue, so queue order is the call order.
func submit(t *testing.T, g *groupCommitter, workflowID string, job int64, want int) *submission {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &submission{event: contract.JobEvent{DeliveryID: fmt.Sprintf("d%d", job), JobID: job, Action: "queued"}, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- g.Submit(ctx, workflowID, s.event, autoscalerStart{}) }()
	if want > 0 {
		require.Eventually(t, func() bool { return g.queued(workflowID) == want }, 10*time.Second, time.Millisecond)
	}
	return s
}

func (s *submission) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("delivery %s got no answer", s.event.DeliveryID)
		return nil
	}
}

func (s *submission) pending() bool { return len(s.done) == 0 }

func eventsOf(subs ...*submission) []contract.JobEvent {
	var out []contract.JobEvent
	for _, s := range subs {
		out = append(out, s.event)
	}
	return out
}

const testHRA = "hra/ci/app"

// signalInFlight starts a committer whose first delivery's signal (job 1 to
// testHRA) is in flight, waiting for the test's answer.
func signalInFlight(t *testing.T) (*gatedSignaller, *groupCommitter, *submission, signalCall) {
	temporal := newGatedSignaller()
	g := newTestCommitter(temporal)
	first := submit(t, g, testHRA, 1, 0)
	return temporal, g, first, temporal.next(t)
}

func TestDeliveriesQueuedBehindASignalShareTheNextOne(t *testing.T) {
	temporal, g, first, call := signalInFlight(t)
	const hra = testHRA
	require.Equal(t, contract.SignalJob, call.name, "a lone delivery is sent at once, as a job signal")
	require.Equal(t, eventsOf(first), call.events)

	var queued []*submission
	for i := range 5 {
		queued = append(queued, submit(t, g, hra, int64(2+i), i+1))
	}
	temporal.none(t)
	require.True(t, first.pending(), "no answer before the signal is durable")
	call.answer <- nil
	require.NoError(t, first.result(t))

	batch := temporal.next(t)
	require.Equal(t, hra, batch.id)
	require.Equal(t, contract.SignalJobs, batch.name)
	require.Equal(t, eventsOf(queued...), batch.events, "everything that queued meanwhile, in arrival order")
	for _, s := range queued {
		require.True(t, s.pending())
	}
	batch.answer <- nil
	for _, s := range queued {
		require.NoError(t, s.result(t))
	}
	temporal.none(t)
	require.Eventually(t, func() bool { return g.laneCount() == 0 }, 10*time.Second, time.Millisecond, "an idle autoscaler keeps no lane")

	require.Equal(t, 1.0, testutil.ToFloat64(g.metrics.signals.WithLabelValues(contract.SignalJob, "accepted")))
	require.Equal(t, 1.0, testutil.ToFloat64(g.metrics.signals.WithLabelValues(contract.SignalJobs, "accepted")))
}

func TestDifferentAutoscalersDoNotWaitForEachOther(t *testing.T) {
	temporal := newGatedSignaller()
	g := newTestCommitter(temporal)
	a := submit(t, g, "hra/ci/a", 1, 0)
	callA := temporal.next(t)
	b := submit(t, g, "hra/ci/b", 2, 0)
	callB := temporal.next(t)
	require.Equal(t, "hra/ci/b", callB.id, "b is signalled while a's signal is still in flight")
	callB.answer <- nil
	require.NoError(t, b.result(t))
	require.True(t, a.pending())
	callA.answer <- nil
	require.NoError(t, a.result(t))
}

func TestAFailedSignalFailsExactlyTheDeliveriesItCarried(t *testing.T) {
	temporal, g, first, call := signalInFlight(t)
	const hra = testHRA
	refused := errors.New("connection refused")

	second, third := submit(t, g, hra, 2, 1), submit(t, g, hra, 3, 2)
	call.answer <- refused
	require.ErrorIs(t, first.result(t), refused)

	batch := temporal.next(t)
	require.Equal(t, eventsOf(second, third), batch.events, "the queued deliveries are not failed with the signal before them")
	fourth := submit(t, g, hra, 4, 1)
	batch.answer <- nil
	require.NoError(t, second.result(t))
	require.NoError(t, third.result(t))

	last := temporal.next(t)
	require.Equal(t, eventsOf(fourth), last.events)
	last.answer <- refused
	require.ErrorIs(t, fourth.result(t), refused)
	require.Equal(t, 2.0, testutil.ToFloat64(g.metrics.signals.WithLabelValues(contract.SignalJob, "failed")))
	require.Equal(t, 1.0, testutil.ToFloat64(g.metrics.signals.WithLabelValues(contract.SignalJobs, "accepted")))
}

func TestACancelledDeliveryNeitherLosesNorDuplicatesOthers(t *testing.T) {
	temporal, g, inFlight, call := signalInFlight(t)
	const hra = testHRA
	a, gone, b := submit(t, g, hra, 2, 1), submit(t, g, hra, 3, 2), submit(t, g, hra, 4, 3)

	gone.cancel()
	require.ErrorIs(t, gone.result(t), context.Canceled, "a request that ends stops waiting at once")
	inFlight.cancel()
	require.ErrorIs(t, inFlight.result(t), context.Canceled)
	call.answer <- nil // the signal in flight completes for nobody, and harms nobody

	batch := temporal.next(t)
	require.Equal(t, eventsOf(a, b), batch.events, "the cancelled delivery was not sent; the others once each")
	batch.answer <- nil
	require.NoError(t, a.result(t))
	require.NoError(t, b.result(t))
	temporal.none(t)
}

func TestBatchesAreBoundedByCountAndSize(t *testing.T) {
	temporal := newGatedSignaller()
	g := newTestCommitter(temporal)
	g.maxEvents = 3
	const hra = testHRA

	first := submit(t, g, hra, 1, 0)
	call := temporal.next(t)
	var queued []*submission
	for i := range 7 {
		queued = append(queued, submit(t, g, hra, int64(10+i), i+1))
	}
	call.answer <- nil
	require.NoError(t, first.result(t))
	for _, want := range [][]*submission{queued[0:3], queued[3:6], queued[6:7]} {
		batch := temporal.next(t)
		require.Equal(t, eventsOf(want...), batch.events)
		batch.answer <- nil
		for _, s := range want {
			require.NoError(t, s.result(t))
		}
	}

	// A budget of two and a half events takes two.
	require.Eventually(t, func() bool { return g.laneCount() == 0 }, 10*time.Second, time.Millisecond)
	encoded, err := json.Marshal(contract.JobEvent{DeliveryID: "d20", JobID: 20, Action: "queued"})
	require.NoError(t, err)
	g.maxEvents, g.maxBytes = maxBatchEvents, 5*len(encoded)/2
	first = submit(t, g, hra, 1, 0)
	call = temporal.next(t)
	queued = queued[:0]
	for i := range 3 {
		queued = append(queued, submit(t, g, hra, int64(20+i), i+1))
	}
	call.answer <- nil
	require.NoError(t, first.result(t))
	for _, want := range [][]*submission{queued[0:2], queued[2:3]} {
		batch := temporal.next(t)
		require.Equal(t, eventsOf(want...), batch.events)
		batch.answer <- nil
	}
	for _, s := range queued {
		require.NoError(t, s.result(t))
	}
}

// jobBody is the real queued payload with another workflow_job id.
func jobBody(t *testing.T, job int64) []byte {
	var payload map[string]any
	require.NoError(t, json.Unmarshal(fixture(t, "workflow_job.queued.payload.json"), &payload))
	payload["workflow_job"].(map[string]any)["id"] = job
	body, err := json.Marshal(payload)
	require.NoError(t, err)
	return body
}

func TestSignedDeliveriesDuringASignalAreAnsweredByTheNextOne(t *testing.T) {
	temporal := newGatedSignaller()
	reg := prometheus.NewRegistry()
	s, err := New(Config{Secret: secret}, oneHRA{}, temporal, reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	answers := make(chan *httptest.ResponseRecorder, 10)
	post := func(job int64) {
		body := jobBody(t, job)
		go func() { answers <- deliver(s, "workflow_job", fmt.Sprintf("delivery-%d", job), body, sign(body)) }()
	}

	post(1)
	first := temporal.next(t)
	for job := int64(2); job <= 10; job++ {
		post(job)
	}
	require.Eventually(t, func() bool { return s.commits.queued("hra/ci/hello") == 9 }, 10*time.Second, time.Millisecond)
	require.Empty(t, answers, "nothing is answered before its signal is durable")
	first.answer <- nil
	require.Equal(t, http.StatusAccepted, (<-answers).Code)

	batch := temporal.next(t)
	require.Equal(t, contract.SignalJobs, batch.name)
	require.Len(t, batch.events, 9)
	jobs := map[int64]bool{}
	for _, ev := range batch.events {
		jobs[ev.JobID] = true
		require.Equal(t, fmt.Sprintf("delivery-%d", ev.JobID), ev.DeliveryID)
	}
	require.Len(t, jobs, 9, "each delivery once")
	batch.answer <- errors.New("connection refused")
	for range 9 {
		resp := <-answers
		require.Equal(t, http.StatusServiceUnavailable, resp.Code, "each delivery the failed signal carried may be redelivered")
	}
	require.Equal(t, 1.0, testutil.ToFloat64(s.metrics.deliveries.WithLabelValues("workflow_job", "accepted")))
	require.Equal(t, 9.0, testutil.ToFloat64(s.metrics.deliveries.WithLabelValues("workflow_job", "temporal_unavailable")))
	require.Equal(t, 2, testutil.CollectAndCount(s.metrics.signals))
	h := &dto.Metric{}
	require.NoError(t, s.metrics.signalEvents.Write(h))
	require.Equal(t, uint64(2), h.GetHistogram().GetSampleCount())
	require.Equal(t, 10.0, h.GetHistogram().GetSampleSum(), "2 signals carried 10 deliveries")
}

// A Temporal that answers but lacks arcflow's namespace or a search attribute
// gets a 503 that names what is missing: no wait mends it, an operator does.
func TestDeliveriesToATemporalNotSetUpNameWhatIsMissing(t *testing.T) {
	cases := map[string]struct {
		err  error
		want string
	}{
		"namespace":        {serviceerror.NewNamespaceNotFound("arcflow"), `no namespace "arcflow"`},
		"search attribute": {serviceerror.NewInvalidArgument("search attribute ArcflowKind is not defined"), "search attribute ArcflowKind"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			temporal := newGatedSignaller()
			s, err := New(Config{Secret: secret, TemporalNamespace: "arcflow"}, oneHRA{}, temporal, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, err)
			body := jobBody(t, 1)
			answer := make(chan *httptest.ResponseRecorder, 1)
			go func() { answer <- deliver(s, "workflow_job", "delivery-1", body, sign(body)) }()
			temporal.next(t).answer <- c.err
			resp := <-answer
			require.Equal(t, http.StatusServiceUnavailable, resp.Code)
			require.Contains(t, resp.Body.String(), c.want)
			require.Contains(t, resp.Body.String(), "arcflow setup")
			require.Equal(t, 1.0, testutil.ToFloat64(s.metrics.deliveries.WithLabelValues("workflow_job", "temporal_not_set_up")))
		})
	}
}
