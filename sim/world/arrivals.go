package world

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// PoissonGap is the time to the next arrival of a Poisson process of rate
// per second: exponentially distributed with mean 1/rate.
func PoissonGap(rng *rand.Rand, rate float64) time.Duration {
	if rate <= 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
}

// PoissonArrivals calls Emit at the arrivals of a Poisson process whose rate
// can change while it runs (a scale run's steps). A change takes effect at
// once: the gap being waited is drawn again at the new rate, which the
// process's lack of memory allows.
type PoissonArrivals struct {
	Seed uint64
	// Emit is called at each arrival, with the arrival's number from 1.
	Emit func(n int)

	mu      sync.Mutex
	rate    float64
	changed chan struct{}
}

// SetRate sets the rate in arrivals per second; 0 pauses arrivals.
func (p *PoissonArrivals) SetRate(rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = rate
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
}

func (p *PoissonArrivals) current() (float64, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.rate, p.changed
}

// Run emits arrivals until ctx ends.
func (p *PoissonArrivals) Run(ctx context.Context) {
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed^0xa221))
	n := 0
	for {
		rate, changed := p.current()
		wait := time.Hour
		if rate > 0 {
			wait = PoissonGap(rng, rate)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-changed:
			t.Stop()
		case <-t.C:
			n++
			p.Emit(n)
		}
	}
}
