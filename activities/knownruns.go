package activities

import (
	"sync"
	"time"
)

// knownRunsMemory is how long a run an autoscaler knew at its reconcile stays
// known to the others of the process: an autoscaler says again which runs it
// knows at each reconcile (every 5 min by default), and a run that closed is
// no longer listed at all.
const knownRunsMemory = 15 * time.Minute

// knownRuns are the runs of each repository that some autoscaler of this
// process knew at its last reconcile (the runs of its reservations). Each
// autoscaler knows only its own runs, so without them every other autoscaler
// of the repository asked about a run queued behind a pool at its
// maxReplicas at each reconcile: a call per such run and autoscaler. A run
// one autoscaler knows was told by the webhook, so the reconcile, which looks
// for missed deliveries, leaves it alone; a worker replica that did not hear
// of it asks, as before.
type knownRuns struct {
	mu     sync.Mutex
	byRepo map[string]map[int64]time.Time
}

// note records that an autoscaler knows these runs of the repositories it
// reconciles (its reservations do not say which repository a run is of).
func (k *knownRuns) note(repos []string, runs []int64, now time.Time) {
	if len(runs) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byRepo == nil {
		k.byRepo = map[string]map[int64]time.Time{}
	}
	for _, repo := range repos {
		known := k.byRepo[repo]
		if known == nil {
			known = map[int64]time.Time{}
			k.byRepo[repo] = known
		}
		for _, run := range runs {
			known[run] = now
		}
		for run, at := range known {
			if now.Sub(at) > knownRunsMemory {
				delete(known, run)
			}
		}
	}
}

// knows reports whether some autoscaler knew the run lately.
func (k *knownRuns) knows(repo string, run int64, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.byRepo[repo][run]
	return ok && now.Sub(at) <= knownRunsMemory
}
