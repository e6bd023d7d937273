package worker

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

// A change made while Temporal is down waits in the queue and is tried again
// with backoff, up to syncRetryMax (10 s) apart, so it could wait that long
// after Temporal came back. While changes wait for Temporal, the worker asks
// Temporal's health once a second, and when an answer comes after a failure,
// it queues every waiting change at once. A try already under way when
// Temporal returns goes through on its own: the SDK retries the call until
// its deadline (10 s), and the client reconnects within a second of the
// return (cmd/arcflow's temporalReturnDialOptions).

// temporalReturnProbe is how often the worker asks whether Temporal is back
// while changes wait for it: one health call a second, only then.
const temporalReturnProbe = time.Second

// waitingForTemporal are the resources whose last change failed because
// Temporal could not be reached.
type waitingForTemporal struct {
	mu   sync.Mutex
	keys map[resourceKey]bool
}

func (s *waitingForTemporal) add(key resourceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[resourceKey]bool{}
	}
	s.keys[key] = true
}

func (s *waitingForTemporal) remove(key resourceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
}

func (s *waitingForTemporal) any() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys) > 0
}

// take empties the set and returns what it held.
func (s *waitingForTemporal) take() []resourceKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]resourceKey, 0, len(s.keys))
	for k := range s.keys {
		keys = append(keys, k)
	}
	s.keys = nil
	return keys
}

// watchTemporalReturn sends the waiting changes as soon as Temporal answers
// again. Only a health answer after a failed one counts as a return: when
// Temporal answers its health but fails the changes for another reason, the
// queue's backoff paces them as before.
func (w *ResourceWatcher) watchTemporalReturn(ctx context.Context) {
	tick := time.NewTicker(temporalReturnProbe)
	defer tick.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !w.waiting.any() {
			down = false
			continue
		}
		probe, cancel := context.WithTimeout(ctx, temporalReturnProbe)
		_, err := w.Temporal.CheckHealth(probe, &client.CheckHealthRequest{})
		cancel()
		switch {
		case err != nil:
			down = true
		case down:
			down = false
			keys := w.waiting.take()
			w.Log.Info("Temporal is back; sending the changes that waited for it", "resources", len(keys))
			for _, key := range keys {
				w.queue.Add(key) // now, not at the end of its backoff
			}
		}
	}
}
