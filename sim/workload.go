package sim

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Workload queues jobs: all at once (a burst) or at a steady rate, spread over
// repositories and label sets in turn.
type Workload struct {
	// Jobs is how many jobs to queue.
	Jobs int
	// Rate is jobs per second; 0 queues them all at once.
	Rate float64
	// Repositories are owner/name; job i goes to Repositories[i % len].
	Repositories []string
	// LabelSets are the runs-on labels; job i asks for LabelSets[i % len].
	LabelSets [][]string
}

// Validate says what is wrong with a workload before it starts.
func (w Workload) Validate() error {
	switch {
	case w.Jobs < 0:
		return fmt.Errorf("workload: jobs must not be negative, got %d", w.Jobs)
	case w.Rate < 0:
		return fmt.Errorf("workload: rate must not be negative, got %v", w.Rate)
	case len(w.Repositories) == 0:
		return errors.New("workload: no repositories")
	case len(w.LabelSets) == 0:
		return errors.New("workload: no label sets")
	}
	return nil
}

// Run queues the jobs through queue, pacing them by Rate, until done or ctx ends.
func (w Workload) Run(ctx context.Context, queue func(repo, name string, labels []string)) error {
	if err := w.Validate(); err != nil {
		return err
	}
	start := time.Now()
	for i := range w.Jobs {
		if w.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / w.Rate * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		queue(w.Repositories[i%len(w.Repositories)], fmt.Sprintf("job-%d", i+1), w.LabelSets[i%len(w.LabelSets)])
	}
	return nil
}
