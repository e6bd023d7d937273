package world

import (
	"context"
	"sync"
	"time"
)

// TrackPeak samples count every period until the returned stop is called;
// stop returns the highest count seen. count runs outside the caller's
// goroutine, so it must not fail a test itself.
func TrackPeak(ctx context.Context, period time.Duration, count func() int) (stop func() int) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu   sync.Mutex
		peak int
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				n := count()
				mu.Lock()
				peak = max(peak, n)
				mu.Unlock()
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
