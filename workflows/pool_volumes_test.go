package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows/contract"
)

func runnerSetSpec(replicas int, volumeHash string) PoolSpec {
	s := spec(replicas, "h1", true)
	s.Kind, s.VolumeHash, s.VolumeIdleTimeout = "RunnerSet", volumeHash, time.Hour
	return s
}

func (pt *poolTest) deletedVolumes() *[]activities.VolumeSlotRef {
	var deleted []activities.VolumeSlotRef
	pt.env.OnActivity(kube.DeleteVolumes, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DeleteVolumesInput) error {
			deleted = append(deleted, in.Slots...)
			return nil
		})
	return &deleted
}

func slotOf(c createdRunner) int { return c.volume.Index }

// A finished runner's volume slot goes to the next runner, the lowest free slot
// first; slots never outnumber the runners that ran at once; a slot free for the
// idle timeout is deleted, and the rest when the pool is deleted.
func TestRunnerSetVolumeSlotsAreReusedAndCleanedUp(t *testing.T) {
	pt := newPoolTest(t)
	deleted := pt.deletedVolumes()
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 2)
		require.ElementsMatch(t, []int{0, 1}, []int{slotOf(pt.created[0]), slotOf(pt.created[1])})
		require.Equal(t, "v1", pt.created[0].volume.Hash)
		pt.registerAll()
		pt.done(pt.created[0].name, EndCompleted) // an ephemeral runner finished its job
	})
	pt.at(2*time.Minute, func() {
		require.Len(t, pt.created, 3, "replaced")
		require.Equal(t, slotOf(pt.created[0]), slotOf(pt.created[2]), "on the volume its predecessor used")
		require.Equal(t, 2, pt.status.VolumesInUse)
		require.Zero(t, pt.status.VolumesFree)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1})
	})
	pt.at(2*time.Minute+time.Second, func() {
		require.Len(t, pt.stopped, 1)
		pt.done(pt.stopped[0], EndStopped)
	})
	pt.at(2*time.Minute+2*time.Second, func() {
		require.Equal(t, 1, pt.status.VolumesInUse)
		require.Equal(t, 1, pt.status.VolumesFree, "kept for the next runner")
		require.Empty(t, *deleted)
	})
	pt.at(62*time.Minute+3*time.Second, func() {
		require.Len(t, *deleted, 1, "free for the idle timeout: deleted")
		require.Zero(t, pt.status.VolumesFree)
		require.Len(t, pt.state().Volumes, 1)
	})
	pt.deleteAndDrain(63 * time.Minute)
	pt.run(runnerSetSpec(2, "v1"))
	require.Len(t, *deleted, 2, "the pool's last slot went with it")
}

// Changed volumeClaimTemplates start fresh volumes: the old slots are deleted
// as their runners end, and new runners get slots of the new templates.
func TestChangedVolumeTemplatesStartFreshVolumes(t *testing.T) {
	pt := newPoolTest(t)
	deleted := pt.deletedVolumes()
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 1)
		pt.registerAll()
		next := runnerSetSpec(1, "v2")
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(2*time.Second, func() { pt.done(pt.created[0].name, EndCompleted) })
	pt.at(3*time.Minute, func() {
		require.Equal(t, []activities.VolumeSlotRef{{Index: 0, Hash: "v1"}}, *deleted, "retired when its runner ended")
		require.Len(t, pt.created, 2)
		require.Equal(t, activities.VolumeSlotRef{Index: 0, Hash: "v2"}, *pt.created[1].volume)
	})
	pt.deleteAndDrain(4 * time.Minute)
	pt.run(runnerSetSpec(1, "v1"))
}

// A RunnerDeployment, or a RunnerSet without volumeClaimTemplates, has no slots.
func TestPoolsWithoutVolumeTemplatesHaveNoSlots(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Nil(t, pt.created[0].volume)
		require.Empty(t, pt.state().Volumes)
	})
	pt.deleteAndDrain(2 * time.Second)
	pt.run(runnerSetSpec(2, ""))
}
