package workflows

// Completions the autoscaler has not counted yet. An ephemeral runner ends
// right after its job, but the job's completed delivery reaches the
// autoscaler through GitHub, the webhook and group commit, and only the
// autoscaler's next scale request drops the job from Replicas (naming the
// runner in Finished). Until then Replicas still counts the job, so the pool
// counts the ended runner as capacity: replacing it would create a runner no
// job needs, which the next request then stops. The fixed CompletionGrace
// before it deferred all creation for 2 s after each finished job, which a
// stream of completions kept pushing out, and which an autoscaler lagging by
// more than 2 s outran (1,000 jobs at once on the dev server: 1.32 runner pods
// per job, a RemoveRunner for each surplus one). A completion that never
// reaches the autoscaler (a lost delivery) frees its runner's place after
// unheardCompletionBound.

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// unheardCompletionsVersion marks pools that count ended runners as capacity
// until the autoscaler names them (PoolState.Unheard) instead of deferring all
// creation by CompletionGrace.
const unheardCompletionsVersion = "unheard-completions"

// unheardCompletionBound is how long an ended runner counts while its
// autoscaler does not name it: above the webhook-to-pool lag of a 1,000 job
// burst on the dev server, where completions queued behind the burst's
// queued deliveries came up to about 40 s late.
const unheardCompletionBound = time.Minute

// UnheardRunner is an ephemeral runner that ended after its job before its
// autoscaler named it in Finished; it counts as capacity until Until.
type UnheardRunner struct {
	Name  string
	Until time.Time
}

// countsUnheard says whether an ephemeral runner that ended after its job
// counts until its autoscaler names it. Only an autoscaler that hears its
// jobs names finished runners, and says so (ScaleRequest.NamesFinished): by
// webhook in every request from its first job on (a burst's first
// completions come while its queued deliveries still stream in, long before
// any start is heard), for a scale set from its listener's first message on. Only pools since unheardCompletionsVersion count it; others, and
// pools of metric-driven autoscalers, keep CompletionGrace.
func (p *poolRun) countsUnheard(ctx workflow.Context) bool {
	s := &p.state
	return s.Spec.Ephemeral && s.Scale != nil && s.Scale.NamesFinished &&
		workflow.GetVersion(ctx, unheardCompletionsVersion, workflow.DefaultVersion, 1) >= 1
}

// hearFinished drops the unheard runners the autoscaler named: its request
// no longer counts their jobs.
func (s *PoolState) hearFinished(names []string) {
	if len(s.Unheard) == 0 || len(names) == 0 {
		return
	}
	named := make(map[string]bool, len(names))
	for _, n := range names {
		named[n] = true
	}
	kept := s.Unheard[:0]
	for _, u := range s.Unheard {
		if !named[u.Name] {
			kept = append(kept, u)
		}
	}
	s.Unheard = kept
}

// expireUnheard drops the unheard runners whose bound passed, and returns
// how many still count and when the first of them stops counting.
func (s *PoolState) expireUnheard(now time.Time) (count int, until time.Time) {
	kept := s.Unheard[:0]
	for _, u := range s.Unheard {
		if now.Before(u.Until) {
			kept = append(kept, u)
			if until.IsZero() || u.Until.Before(until) {
				until = u.Until
			}
		}
	}
	s.Unheard = kept
	return len(kept), until
}
