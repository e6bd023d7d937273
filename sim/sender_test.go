package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v88/github"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// hookSink is a webhook receiver that checks signatures as arcflow's server does.
type hookSink struct {
	mu       sync.Mutex
	events   []*gh.WorkflowJobEvent
	ids      []string
	failNext int
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := gh.ValidatePayload(r, []byte("s3cret"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	parsed, err := gh.ParseWebHook(gh.WebHookType(r), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failNext > 0 {
		h.failNext--
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	h.events = append(h.events, parsed.(*gh.WorkflowJobEvent))
	h.ids = append(h.ids, r.Header.Get("X-GitHub-Delivery"))
	w.WriteHeader(http.StatusAccepted)
}

func event(id int64, action string) fakegithub.JobEvent {
	return fakegithub.JobEvent{Action: action, Job: fakegithub.JobInfo{ID: id, RunID: id - 1, Repo: "octo-org/app", Name: "build",
		Labels: []string{"self-hosted", "linux"}, Status: action, CreatedAt: time.Now()}}
}

func startSender(t *testing.T, s *Sender, sink http.Handler) {
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	s.URL, s.Secret = srv.URL, []byte("s3cret")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
}

func flush(t *testing.T, s *Sender) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Flush(ctx))
}

func TestSenderDeliversSignedWorkflowJobEvents(t *testing.T) {
	sink := &hookSink{}
	s := &Sender{Orgs: []string{"octo-org"}, Workers: 1}
	startSender(t, s, sink)
	running := event(7, "in_progress")
	running.Runner = fakegithub.RunnerInfo{ID: 3, Name: "app-abc"}
	running.Job.StartedAt = time.Now()
	s.Send(event(7, "queued"))
	s.Send(running)
	flush(t, s)

	require.Len(t, sink.events, 2)
	first := sink.events[0]
	require.Equal(t, "queued", first.GetAction())
	require.Equal(t, int64(7), first.GetWorkflowJob().GetID())
	require.Equal(t, []string{"self-hosted", "linux"}, first.GetWorkflowJob().Labels)
	require.Equal(t, "octo-org/app", first.GetRepo().GetFullName())
	require.Equal(t, "octo-org", first.GetOrg().GetLogin())
	require.Equal(t, "app-abc", sink.events[1].GetWorkflowJob().GetRunnerName())
	stats := s.Stats()
	require.Equal(t, 2, stats.Accepted)
	require.Contains(t, stats.QueuedAccepted, int64(7))
}

func TestSenderLosesDuplicatesAndReordersWhenAsked(t *testing.T) {
	sink := &hookSink{}
	s := &Sender{Loss: 0.1, Duplicate: 0.3, Reorder: 0.2, MaxDelay: 5 * time.Millisecond, Seed: 42}
	startSender(t, s, sink)
	const n = 400
	for i := range n {
		s.Send(event(int64(1000+i), "queued"))
	}
	flush(t, s)

	stats := s.Stats()
	require.Equal(t, n, stats.Events)
	require.InDelta(t, 0.1*n, stats.Lost, 0.05*n)
	require.InDelta(t, 0.3*float64(n-stats.Lost), stats.Duplicated, 0.08*n)
	require.Positive(t, stats.Reordered)
	require.Equal(t, n-stats.Lost+stats.Duplicated, stats.Accepted)
	require.Len(t, sink.events, stats.Accepted)

	// A duplicate keeps its delivery ID, as a GitHub redelivery does.
	seen := map[string]int{}
	for _, id := range sink.ids {
		seen[id]++
	}
	require.Len(t, seen, n-stats.Lost)

	// Some deliveries arrive out of order.
	outOfOrder := 0
	for i := 1; i < len(sink.events); i++ {
		if sink.events[i].GetWorkflowJob().GetID() < sink.events[i-1].GetWorkflowJob().GetID() {
			outOfOrder++
		}
	}
	require.Positive(t, outOfOrder)
}

func TestSenderDoesNotRetryRefusedDeliveries(t *testing.T) {
	sink := &hookSink{failNext: 1}
	s := &Sender{Workers: 1}
	startSender(t, s, sink)
	s.Send(event(1, "queued"))
	flush(t, s)
	s.Send(event(2, "queued"))
	flush(t, s)
	stats := s.Stats()
	require.Equal(t, 1, stats.Rejected)
	require.Equal(t, 1, stats.Accepted)
	require.Len(t, sink.events, 1)
	require.NotContains(t, stats.QueuedAccepted, int64(1))
}

func TestSenderCountsUnreachableReceiverAsFailed(t *testing.T) {
	s := &Sender{URL: "http://127.0.0.1:1/webhook", Secret: []byte("x")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	s.Send(event(1, "queued"))
	flush(t, s)
	require.Equal(t, 1, s.Stats().Failed)
}

// With several URLs, deliveries alternate between them, as behind a load balancer
// in front of several webhook replicas.
func TestSenderSpreadsDeliveriesOverURLsInTurn(t *testing.T) {
	sinks := []*hookSink{{}, {}}
	var urls []string
	for _, sink := range sinks {
		srv := httptest.NewServer(sink)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	s := &Sender{URLs: urls, Secret: []byte("s3cret"), Workers: 1}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	for id := int64(1); id <= 6; id++ {
		s.Send(event(id, "queued"))
	}
	require.NoError(t, s.Flush(ctx))
	for i, sink := range sinks {
		sink.mu.Lock()
		require.Len(t, sink.events, 3, "sink %d", i)
		// One worker posts in order: odd jobs to the first URL, even to the second.
		for _, e := range sink.events {
			require.Equal(t, int64(i), (e.GetWorkflowJob().GetID()+1)%2, "sink %d", i)
		}
		sink.mu.Unlock()
	}
	require.Equal(t, 6, s.Stats().Accepted)
}
