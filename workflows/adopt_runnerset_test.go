package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

// What ARC left of RunnerSet app: a busy and an idle runner, each with its
// StatefulSet's claim, and the claims of two StatefulSets ARC already deleted,
// one of the RunnerSet's templates and one of older ones.
func arcRunnerSetLeft() activities.ARCRunnerSetRunners {
	running := activities.PodState{Exists: true, Phase: "Running", Ready: true}
	claim := func(sts string, match bool) *activities.ARCClaimSet {
		return &activities.ARCClaimSet{StatefulSet: sts, Claims: map[string]string{"cache": "cache-" + sts + "-0"}, Match: match}
	}
	return activities.ARCRunnerSetRunners{
		Runners: []activities.ARCRunner{
			{Name: "app-aaaaa-0", Ephemeral: true, RunnerID: 1, Pod: running, Claims: claim("app-aaaaa", true)},
			{Name: "app-bbbbb-0", Ephemeral: true, RunnerID: 2, Pod: running, Claims: claim("app-bbbbb", true)},
		},
		Claims: []activities.ARCClaimSet{*claim("app-ccccc", true), *claim("app-ddddd", false)},
	}
}

// A RunnerSet's pool takes over ARC's runners and their claims on its first
// run: the runners count as capacity, the claims become volume slots (held by
// their runner, or free), a new runner mounts a free one of ARC's claims
// rather than a new claim, a claim of other templates is deleted, a runner's
// claims go to the next runner once it ends, and the rest go with the pool.
func TestARunnerSetPoolTakesOverARCsRunnersAndTheirClaims(t *testing.T) {
	pt := newPoolTest(t)
	deleted := pt.deletedVolumes()
	pt.env.OnActivity(kube.ARCRunnerSet, mock.Anything, mock.Anything).Return(arcRunnerSetLeft(), nil)
	var relabelled []activities.VolumeSlotRef
	pt.env.OnActivity(kube.AdoptARCClaims, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.AdoptARCClaimsInput) error {
			require.Empty(t, pt.adopted, "the claims are the pool's before any runner is")
			relabelled = append(relabelled, in.Slots...)
			return nil
		})
	pt.busy["app-aaaaa-0"] = true
	pt.at(time.Second, func() {
		require.Len(t, relabelled, 4)
		require.Len(t, pt.adopted, 2)
		require.Len(t, pt.created, 1, "two of three replicas are ARC's")
		require.Equal(t, &activities.VolumeSlotRef{Index: 2, Hash: "v1", Claims: map[string]string{"cache": "cache-app-ccccc-0"}},
			pt.created[0].volume, "the new runner mounts the claim of a StatefulSet ARC deleted")
		require.Equal(t, []activities.VolumeSlotRef{{Index: 3, Hash: arcVolumeHash}}, *deleted, "a claim of other templates goes")
		require.Equal(t, 3, pt.status.VolumesInUse)
		require.Contains(t, pt.events, "AdoptedVolumes: took over the claims of 4 StatefulSet(s) ARC left as volume slots, 3 of them matching the volumeClaimTemplates")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(2*time.Second, func() {
		require.Contains(t, pt.stopped, "app-bbbbb-0", "the idle one goes")
		require.NotContains(t, pt.stopped, "app-aaaaa-0", "the busy one finishes its job")
		pt.finishStopped()
	})
	pt.at(3*time.Second, func() {
		require.Equal(t, 1, pt.status.VolumesInUse)
		require.Equal(t, 2, pt.status.VolumesFree, "the ended runners' claims are kept for the next")
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2})
	})
	pt.at(4*time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, &activities.VolumeSlotRef{Index: 1, Hash: "v1", Claims: map[string]string{"cache": "cache-app-bbbbb-0"}},
			pt.created[1].volume, "the lowest free slot: the claim ARC's idle runner had")
	})
	pt.deleteAndDrain(5 * time.Second)
	pt.run(runnerSetSpec(3, "v1"))
	require.Len(t, *deleted, 4, "every slot, ARC's claims among them, went with the pool")
}

// Claims ARC left that the pool cannot relabel are left as ARC made them:
// no slot names them, so no runner mounts them and the pool never deletes
// them; the runners are adopted all the same.
func TestARCClaimsThatCannotBeTakenOverAreLeftAlone(t *testing.T) {
	pt := newPoolTest(t)
	deleted := pt.deletedVolumes()
	pt.env.OnActivity(kube.ARCRunnerSet, mock.Anything, mock.Anything).Return(arcRunnerSetLeft(), nil)
	pt.env.OnActivity(kube.AdoptARCClaims, mock.Anything, mock.Anything).Return(errors.New("forbidden"))
	pt.at(10*time.Minute, func() { // past the retries
		require.Len(t, pt.adopted, 2)
		require.Len(t, pt.created, 1)
		require.Equal(t, &activities.VolumeSlotRef{Index: 0, Hash: "v1"}, pt.created[0].volume, "a slot of its own")
		require.Empty(t, *deleted)
		require.Contains(t, pt.events[0], "AdoptionFailed: cannot take over the claims ARC left")
	})
	pt.deleteAndDrain(11 * time.Minute)
	pt.run(runnerSetSpec(3, "v1"))
}
