package sim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// Sender delivers workflow_job webhooks the way GitHub does: signed with the
// webhook secret, one POST per event, no automatic retry. It can also behave
// worse than GitHub usually does: lose, duplicate, delay and reorder deliveries.
type Sender struct {
	URL string
	// URLs, when set, replace URL: deliveries go to them in turn, as a load
	// balancer in front of several webhook replicas would spread them.
	URLs   []string
	Secret []byte
	// Orgs lists owners that are organizations; their events carry "organization".
	Orgs []string
	// Loss, Duplicate and Reorder are probabilities in [0, 1].
	Loss, Duplicate, Reorder float64
	// MaxDelay delays each delivery by a random time up to it.
	MaxDelay time.Duration
	// Workers is how many deliveries are in flight at once (default 8).
	Workers int
	Seed    uint64
	Client  *http.Client
	Log     *slog.Logger

	once     sync.Once
	queue    chan delivery
	inflight sync.WaitGroup

	mu     sync.Mutex
	rng    *rand.Rand
	held   *heldDelivery
	nextID int
	posts  int // deliveries posted so far, for the round robin over URLs
	stats  SenderStats
}

type delivery struct {
	id    string
	jobID int64
	event string
	body  []byte
}

// SenderStats counts what happened to deliveries.
type SenderStats struct {
	Events     int // job events heard
	Posted     int // POSTs made, duplicates included
	Accepted   int // answered 2xx
	Rejected   int // answered with another status
	Failed     int // no answer (connection refused, timeout)
	Lost       int // dropped on purpose
	Duplicated int
	Reordered  int
	// Latencies are the answer times of 2xx deliveries.
	Latencies []time.Duration
	// QueuedAccepted is when each job's queued delivery was first accepted.
	QueuedAccepted map[int64]time.Time
}

// Start starts the delivery workers; they stop when ctx ends.
func (s *Sender) Start(ctx context.Context) {
	s.setup()
	for range s.Workers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-s.queue:
					s.post(ctx, d)
					s.inflight.Done()
				}
			}
		}()
	}
}

func (s *Sender) setup() {
	s.once.Do(func() {
		if s.Workers == 0 {
			s.Workers = 8
		}
		if s.Client == nil {
			s.Client = &http.Client{Timeout: 10 * time.Second}
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		s.rng = rand.New(rand.NewPCG(s.Seed, s.Seed^0xdeadbeef))
		s.queue = make(chan delivery, 1<<16)
		s.stats.QueuedAccepted = map[int64]time.Time{}
	})
}

// Send delivers a job event; it never blocks for the delivery.
func (s *Sender) Send(e fakegithub.JobEvent) {
	s.setup()
	owner, _, _ := strings.Cut(e.Job.Repo, "/")
	isOrg := false
	for _, o := range s.Orgs {
		isOrg = isOrg || strings.EqualFold(o, owner)
	}
	body, err := workflowJobPayload(e, isOrg)
	if err != nil {
		s.Log.Error("cannot build webhook payload", "error", err)
		return
	}
	s.mu.Lock()
	due := s.planLocked(e, body)
	s.mu.Unlock()
	s.dispatch(due)
}

// planned is a delivery and the delay before it is queued.
type planned struct {
	d     delivery
	delay time.Duration
}

// planLocked decides what becomes of an event: lost, sent once or twice, held
// back behind the next one, or sent with the one held before it.
func (s *Sender) planLocked(e fakegithub.JobEvent, body []byte) []planned {
	s.stats.Events++
	s.nextID++
	d := delivery{id: fmt.Sprintf("sim-%08d", s.nextID), jobID: e.Job.ID, event: e.Action, body: body}
	if s.rng.Float64() < s.Loss {
		s.stats.Lost++
		return nil
	}
	copies := 1
	if s.rng.Float64() < s.Duplicate {
		copies = 2
		s.stats.Duplicated++
	}
	s.inflight.Add(copies)
	if s.held == nil && s.rng.Float64() < s.Reorder {
		// Hold this one back until the next delivery has gone, or for a second.
		s.stats.Reordered++
		held := &heldDelivery{d: d, copies: copies}
		s.held = held
		time.AfterFunc(time.Second, func() { s.release(held) })
		return nil
	}
	due := s.copiesLocked(d, copies)
	if s.held != nil {
		due = append(due, s.releaseLocked()...)
	}
	return due
}

type heldDelivery struct {
	d      delivery
	copies int
}

// release sends a held delivery if no later one has released it already.
func (s *Sender) release(h *heldDelivery) {
	s.mu.Lock()
	var due []planned
	if s.held == h {
		due = s.releaseLocked()
	}
	s.mu.Unlock()
	s.dispatch(due)
}

func (s *Sender) releaseLocked() []planned {
	due := s.copiesLocked(s.held.d, s.held.copies)
	s.held = nil
	return due
}

// copiesLocked plans copies of a delivery, each with its random delay.
func (s *Sender) copiesLocked(d delivery, copies int) []planned {
	due := make([]planned, copies)
	for i := range due {
		due[i].d = d
		if s.MaxDelay > 0 {
			due[i].delay = time.Duration(s.rng.Int64N(int64(s.MaxDelay)))
		}
	}
	return due
}

// dispatch queues planned deliveries, whose inflight counts are already taken. It
// runs without s.mu: a full queue waits for workers, which take s.mu to count.
func (s *Sender) dispatch(due []planned) {
	for _, p := range due {
		if p.delay <= 0 {
			s.queue <- p.d
			continue
		}
		time.AfterFunc(p.delay, func() { s.queue <- p.d })
	}
}

func (s *Sender) post(ctx context.Context, d delivery) {
	mac := hmac.New(sha256.New, s.Secret)
	mac.Write(d.body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.nextURL(), bytes.NewReader(d.body))
	if err != nil {
		s.Log.Error("bad webhook URL", "error", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/sim")
	req.Header.Set("X-GitHub-Event", "workflow_job")
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	start := time.Now()
	resp, err := s.Client.Do(req)
	took := time.Since(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Posted++
	if err != nil {
		s.stats.Failed++
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.stats.Rejected++
		s.Log.Warn("webhook delivery refused", "delivery", d.id, "status", resp.StatusCode)
		return
	}
	s.stats.Accepted++
	s.stats.Latencies = append(s.stats.Latencies, took)
	if _, seen := s.stats.QueuedAccepted[d.jobID]; d.event == "queued" && !seen {
		s.stats.QueuedAccepted[d.jobID] = time.Now()
	}
}

// nextURL is where the next delivery goes: URL, or the next of URLs in turn.
func (s *Sender) nextURL() string {
	if len(s.URLs) == 0 {
		return s.URL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	url := s.URLs[s.posts%len(s.URLs)]
	s.posts++
	return url
}

// Flush waits until every delivery so far has been answered or has failed.
func (s *Sender) Flush(ctx context.Context) error {
	s.setup()
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("webhook deliveries still in flight: %w", ctx.Err())
	}
}

// Stats returns a copy of the delivery counts.
func (s *Sender) Stats() SenderStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.stats
	out.Latencies = append([]time.Duration(nil), s.stats.Latencies...)
	out.QueuedAccepted = make(map[int64]time.Time, len(s.stats.QueuedAccepted))
	for k, v := range s.stats.QueuedAccepted {
		out.QueuedAccepted[k] = v
	}
	return out
}
