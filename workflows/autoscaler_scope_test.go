package workflows

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
)

// scopeOf answers the autoscaler's question about its scope as Kubernetes
// would: the latest of the other autoscalers' jobs so far (offsets from the
// start), or fail.
type scopeOf struct {
	others []time.Duration
	fail   bool
	asked  []time.Duration
}

func (at *autoscalerTest) scope(others []time.Duration, fail bool) *scopeOf {
	sc := &scopeOf{others: others, fail: fail}
	at.env.OnActivity(kube.LastArrivalInScope, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ScopeActivityInput) (activities.ScopeActivityOutput, error) {
			require.Equal(at.t, activities.ScopeActivityInput{Namespace: "ci", Scope: "repos/octo/app", Except: "app"}, in)
			now := at.env.Now().Sub(at.start)
			sc.asked = append(sc.asked, now)
			if sc.fail {
				return activities.ScopeActivityOutput{}, errors.New("the API server is away")
			}
			var out activities.ScopeActivityOutput
			for _, o := range sc.others {
				if o <= now {
					out.LastArrival, out.Autoscalers = at.start.Add(o), 1
				}
			}
			return out, nil
		})
	return sc
}

// every lists offsets from first to last, one per gap.
func every(first, last, gap time.Duration) []time.Duration {
	var out []time.Duration
	for t := first; t <= last; t += gap {
		out = append(out, t)
	}
	return out
}

// slowPool gives the autoscaler a 10 s time to ready and six jobs 40 s apart
// (1 s to 201 s), each done 5 s later: too far apart for a 30 s scale-down
// delay, close enough that the rate keeps one warm runner.
func slowPool(at *autoscalerTest) {
	at.warmStatuses()
	at.readyIn10s()
	for i := range 6 {
		queued := time.Second + time.Duration(i)*40*time.Second
		at.job(queued, fmt.Sprintf("q%d", i), int64(i+1), "queued")
		at.job(queued+5*time.Second, fmt.Sprintf("c%d", i), int64(i+1), "completed")
	}
}

// While other autoscalers of the scope hear of jobs, a slow pool keeps its warm
// runner through the gaps between its own jobs; once the whole scope has been
// quiet for the scale-down delay it rests, and stays at rest until its own
// next job even when the scope gets busy again.
func TestABusyScopeKeepsASlowPoolWarmUntilTheScopeIsQuiet(t *testing.T) {
	at := newAutoscalerTest(t)
	slowPool(at)
	// Other pools' jobs every 5 s until 230 s, then again from 300 s.
	sc := at.scope(append(every(0, 230*time.Second, 5*time.Second), every(300*time.Second, 400*time.Second, 5*time.Second)...), false)

	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.state().Warm.Runners, "39 s after its job, past the delay: held for the scope")
		require.Equal(t, 1, at.lastRequest().Warm.Runners)
	}, 200*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.state().Warm.Runners, "the scope's last job was 40 s ago: within the delay and the lag of its status")
	}, 270*time.Second)
	at.env.RegisterDelayedCallback(func() {
		s := at.state()
		require.Zero(t, s.Warm.Runners, "the scope has been quiet for the delay and the lag")
		require.Zero(t, at.lastRequest().Demanded())
		require.True(t, at.start.Add(201*time.Second).Equal(s.Warm.RestedAfter), "rested after %v", s.Warm.RestedAfter)
	}, 272*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.state().Warm.Runners, "at rest until its own next job")
		// Asked at most once per scale-down delay while held: once in each
		// gap past the delay, then once more when the scope went quiet.
		require.LessOrEqual(t, len(sc.asked), 8, "asked at %v", sc.asked)
		require.NotEmpty(t, sc.asked)
	}, 400*time.Second)
	at.finish(401*time.Second, autoSpec(50))
}

// Alone in its scope, the same pool rests 30 s after
// each job, as before: its jobs wait a whole time to ready.
func TestAQuietScopeLetsASlowPoolRestAfterTheDelay(t *testing.T) {
	at := newAutoscalerTest(t)
	slowPool(at)
	at.scope(nil, false)
	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.state().Warm.Runners)
	}, 200*time.Second)
	at.env.RegisterDelayedCallback(func() {
		require.Equal(t, 1, at.state().Warm.Runners, "warm again after its own job")
	}, 202*time.Second)
	at.finish(203*time.Second, autoSpec(50))
}

// A scope that cannot be read is taken as quiet: resting costs nothing, and
// the autoscaler does not ask again until its next job.
func TestAnUnreadableScopeRestsTheBuffer(t *testing.T) {
	at := newAutoscalerTest(t)
	slowPool(at)
	sc := at.scope(every(0, 400*time.Second, 5*time.Second), true)
	at.env.RegisterDelayedCallback(func() {
		require.Zero(t, at.state().Warm.Runners)
		asked := len(sc.asked)
		require.Positive(t, asked)
		at.env.RegisterDelayedCallback(func() {
			require.Equal(t, asked, len(sc.asked), "not asked again before the next job")
		}, 4*time.Second)
	}, 195*time.Second)
	at.finish(200*time.Second, autoSpec(50))
}

// A busy pool writes its last job to the HRA's status every 10 s at most, so
// the others of its scope see it no more than 10 s late, though its count,
// rate and time to ready stay as they were.
func TestTheLastJobIsWrittenForTheScopeEveryTenSeconds(t *testing.T) {
	at := newAutoscalerTest(t)
	statuses := at.warmStatuses()
	at.readyIn10s()
	at.steadyJobs(time.Second, time.Second, 5*time.Second, 90)
	var written []time.Duration
	at.env.RegisterDelayedCallback(func() {
		for _, st := range *statuses {
			if st.LastArrivalTime != nil {
				written = append(written, st.LastArrivalTime.Sub(at.start).Round(time.Second))
			}
		}
		require.NotEmpty(t, written)
		for i := 1; i < len(written); i++ {
			require.LessOrEqual(t, written[i]-written[i-1], arrivalWrittenWithin+time.Second, "written %v", written)
		}
		require.GreaterOrEqual(t, written[len(written)-1], 80*time.Second, "the last job (90 s) at most 10 s late: %v", written)
		require.Less(t, len(written), 30, "not a write per job: %v", written)
	}, 90*time.Second+500*time.Millisecond)
	at.finish(91*time.Second, autoSpec(50))
}
