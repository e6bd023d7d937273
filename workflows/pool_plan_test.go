package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// runners makes n runners of a template; i-th created i minutes after t0.
func runners(prefix, hash string, n int, registered bool) []PoolRunner {
	var out []PoolRunner
	for i := range n {
		out = append(out, PoolRunner{Name: fmt.Sprintf("%s%d", prefix, i), TemplateHash: hash, Created: t0.Add(time.Duration(i) * time.Minute), Registered: registered})
	}
	return out
}

// draining marks runners as asked to stop.
func draining(rs []PoolRunner) []PoolRunner {
	for i := range rs {
		rs[i].Stopping = true
	}
	return rs
}

// finishing marks runners as finishing their last job.
func finishing(rs []PoolRunner) []PoolRunner {
	for i := range rs {
		rs[i].Finishing = true
	}
	return rs
}

// onJobs marks runners busy as the deliveries told (PoolRunner.Busy).
func onJobs(rs []PoolRunner) []PoolRunner {
	for i := range rs {
		rs[i].Busy = true
	}
	return rs
}

func busy(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func TestPlanPool(t *testing.T) {
	for _, tc := range []struct {
		name string
		view PoolView
		want PoolPlan
	}{
		{
			name: "scale up from zero",
			view: PoolView{Desired: 3, TemplateHash: "h", Now: t0},
			want: PoolPlan{Create: 3},
		},
		{
			name: "at desired: nothing to do",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0, Runners: runners("r", "h", 2, true)},
			want: PoolPlan{},
		},
		{
			name: "scale down needs busy flags first",
			view: PoolView{Desired: 1, TemplateHash: "h", Now: t0, Runners: runners("r", "h", 3, true)},
			want: PoolPlan{NeedBusy: true},
		},
		{
			name: "scale down stops the newest idle runners, never a busy one",
			view: PoolView{Desired: 1, TemplateHash: "h", Now: t0, Runners: runners("r", "h", 3, true), Busy: busy("r2")},
			want: PoolPlan{Stop: []string{"r1", "r0"}},
		},
		{
			name: "unregistered runners go before idle ones",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0, Busy: busy(),
				Runners: append(runners("idle", "h", 2, true), PoolRunner{Name: "new", TemplateHash: "h", Created: t0.Add(-time.Hour)})},
			want: PoolPlan{Stop: []string{"new"}},
		},
		{
			name: "every runner busy: blocked, nothing stopped",
			view: PoolView{Desired: 0, TemplateHash: "h", Now: t0, Runners: runners("r", "h", 2, true), Busy: busy("r0", "r1")},
			want: PoolPlan{Blocked: true},
		},
		{
			name: "runners already stopping are not counted",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0,
				Runners: append(runners("r", "h", 2, true), PoolRunner{Name: "s", TemplateHash: "h", Registered: true, Stopping: true})},
			want: PoolPlan{},
		},
		{
			name: "a count held for the scale-down delay keeps runners but creates none",
			view: PoolView{Desired: 4, Held: 2, TemplateHash: "h", Now: t0, Ephemeral: true,
				Runners: []PoolRunner{{Name: "a", TemplateHash: "h", Registered: true}}},
			want: PoolPlan{Create: 1},
		},
		{
			name: "a finished job's runner is not replaced before the autoscaler speaks",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0, Ephemeral: true, ReplaceNotBefore: t0.Add(time.Second)},
			want: PoolPlan{WakeAt: t0.Add(time.Second)},
		},
		{
			name: "... or for the completion grace",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0, Ephemeral: true, ReplaceNotBefore: t0},
			want: PoolPlan{Create: 2},
		},
		{
			name: "registration-timeout backoff defers creation",
			view: PoolView{Desired: 2, TemplateHash: "h", Now: t0, CreateNotBefore: t0.Add(40 * time.Second)},
			want: PoolPlan{WakeAt: t0.Add(40 * time.Second)},
		},
		{
			name: "rollout of 10 busy runners creates new ones only up to the surge",
			view: PoolView{Desired: 10, TemplateHash: "new", MaxSurge: 5, Now: t0, Runners: runners("old", "old", 10, true)},
			want: PoolPlan{Create: 5},
		},
		{
			name: "rollout: registered new runners replace idle old ones",
			view: PoolView{Desired: 10, TemplateHash: "new", MaxSurge: 5, Now: t0, Busy: busy(),
				Runners: append(runners("old", "old", 10, true), runners("new", "new", 5, true)...)},
			want: PoolPlan{Stop: []string{"old9", "old8", "old7", "old6", "old5"}},
		},
		{
			name: "rollout: busy old runners stay until their job ends",
			view: PoolView{Desired: 2, TemplateHash: "new", MaxSurge: 1, Now: t0, Busy: busy("old0", "old1"),
				Runners: append(runners("old", "old", 2, true), runners("new", "new", 1, true)...)},
			want: PoolPlan{Stop: nil, Blocked: true},
		},
		{
			name: "rollout: draining old runners still count against the surge",
			view: PoolView{Desired: 2, TemplateHash: "new", MaxSurge: 1, Now: t0,
				Runners: []PoolRunner{{Name: "old0", TemplateHash: "old", Registered: false}, {Name: "old1", TemplateHash: "old", Stopping: true}}},
			want: PoolPlan{Create: 1}, // 3 pods: desired 2 + surge 1
		},
		{
			name: "rollout: old runners that are all draining still count against the surge",
			view: PoolView{Desired: 10, TemplateHash: "new", MaxSurge: 5, Now: t0, SurgeCountsDraining: true,
				Runners: draining(runners("old", "old", 10, true))},
			want: PoolPlan{Create: 5}, // 15 pods: desired 10 + surge 5
		},
		{
			name: "rollout: ... and so do finishing ones, beside new runners",
			view: PoolView{Desired: 4, TemplateHash: "new", MaxSurge: 2, Now: t0, SurgeCountsDraining: true,
				Runners: append(finishing(runners("old", "old", 3, true)), runners("new", "new", 2, false)...)},
			want: PoolPlan{Create: 1}, // 6 pods: desired 4 + surge 2
		},
		{
			name: "rollout in a run from before SurgeCountsDraining: the surge ends with the last live old runner",
			view: PoolView{Desired: 10, TemplateHash: "new", MaxSurge: 5, Now: t0,
				Runners: draining(runners("old", "old", 10, true))},
			want: PoolPlan{Create: 10},
		},
		{
			name: "rollout under a count held far above the demand, beside busy old runners: nothing to create",
			view: PoolView{Desired: 100, Held: 90, TemplateHash: "new", MaxSurge: 50, DemandSurge: 5, Now: t0, Ephemeral: true, RolloutByDemand: true,
				Runners: onJobs(runners("old", "old", 10, true))},
			want: PoolPlan{}, // each busy old runner serves its job
		},
		{
			name: "... in a run from before RolloutByDemand: as many new runners beside them (issue 37)",
			view: PoolView{Desired: 100, Held: 90, TemplateHash: "new", MaxSurge: 50, DemandSurge: 5, Now: t0, Ephemeral: true,
				Runners: onJobs(runners("old", "old", 10, true))},
			want: PoolPlan{Create: 10},
		},
		{
			name: "rollout under a held count: a job that waits gets one new runner",
			view: PoolView{Desired: 100, Held: 89, TemplateHash: "new", MaxSurge: 50, DemandSurge: 6, Now: t0, Ephemeral: true, RolloutByDemand: true,
				Runners: onJobs(runners("old", "old", 10, true))},
			want: PoolPlan{Create: 1},
		},
		{
			name: "rollout under a held count: old runners whose jobs ended are replaced while the demand lasts",
			view: PoolView{Desired: 100, Held: 90, TemplateHash: "new", MaxSurge: 50, DemandSurge: 5, Now: t0, Ephemeral: true, RolloutByDemand: true,
				Runners: append(onJobs(runners("old", "old", 7, true)), finishing(runners("done", "old", 3, true))...)},
			want: PoolPlan{Create: 3},
		},
		{
			name: "rollout under a held count: idle old runners are replaced within the demand's surge",
			view: PoolView{Desired: 100, Held: 90, TemplateHash: "new", MaxSurge: 50, DemandSurge: 5, Now: t0, Ephemeral: true, RolloutByDemand: true,
				Runners: runners("old", "old", 10, true)},
			want: PoolPlan{Create: 5}, // 15 pods: demand 10 + surge 5
		},
		{
			name: "rollout: busy old static runners do not leave by themselves, so new ones replace them",
			view: PoolView{Desired: 10, TemplateHash: "new", MaxSurge: 5, DemandSurge: 5, Now: t0, RolloutByDemand: true,
				Runners: onJobs(runners("old", "old", 10, true))},
			want: PoolPlan{Create: 5},
		},
		{
			name: "scale to zero during a rollout stops every idle runner",
			view: PoolView{Desired: 0, TemplateHash: "new", Now: t0, Busy: busy("old0"),
				Runners: append(runners("old", "old", 2, true), runners("new", "new", 1, false)...)},
			want: PoolPlan{Stop: []string{"old1", "new0"}, Blocked: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, planPool(tc.view))
		})
	}
}
