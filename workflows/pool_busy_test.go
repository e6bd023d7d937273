package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/workflows/contract"
)

// A static pool whose autoscaler passes its jobs' starts and completions
// stops idle runners without listing the scope's runners: a runner a start
// named is busy (and registered, though it never saw itself listed), and idle
// again once its completion named it. When every runner to stop looks busy, a
// completion may have been missed, and GitHub's list decides.
func TestAPoolTellsBusyRunnersFromDeliveries(t *testing.T) {
	pt := newPoolTest(t)
	scale := func(replicas int, running, finished []string) {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: replicas, StartsDelivered: true, Running: running, Finished: finished})
	}
	var r0, r1, r2 string
	pt.at(time.Second, func() { scale(3, nil, nil) })
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 3)
		for _, c := range pt.created {
			require.True(t, c.patient, "a job's start tells the pool it registered: the runner's own checks may wait")
		}
		r0, r1, r2 = pt.created[0].name, pt.created[1].name, pt.created[2].name
		pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: r0})
	})
	pt.at(3*time.Second, func() { scale(3, []string{r1, r2}, nil) })
	pt.at(4*time.Second, func() {
		require.Equal(t, 3, pt.status.Ready, "the two runners that took jobs registered")
		scale(2, nil, nil)
	})
	pt.at(5*time.Second, func() {
		require.Equal(t, []string{r0}, pt.stopped, "the idle runner, not the two busy ones")
		require.Zero(t, pt.busyCalls, "the deliveries told")
		pt.done(r0, EndStopped)
		scale(1, nil, []string{r1})
	})
	pt.at(6*time.Second, func() {
		require.Equal(t, []string{r0, r1}, pt.stopped, "the runner whose job completed is idle again")
		require.Zero(t, pt.busyCalls)
		pt.done(r1, EndStopped)
		scale(0, nil, nil) // r2's completion never came
	})
	pt.at(7*time.Second, func() {
		require.Equal(t, 1, pt.busyCalls, "every runner to stop looked busy: GitHub's list decides")
		require.Equal(t, []string{r0, r1, r2}, pt.stopped, "GitHub lists it idle")
	})
	pt.at(8*time.Second, func() {
		pt.done(r2, EndStopped)
		scale(1, nil, nil)
	})
	pt.at(8*time.Second+500*time.Millisecond, func() { scale(2, nil, nil) }) // r4 is newer than r3
	pt.at(9*time.Second, func() {
		require.Len(t, pt.created, 5)
		r3, r4 := pt.created[3].name, pt.created[4].name
		// r4 ends a job and takes the next in one request: busy.
		scale(2, []string{r3, r4}, []string{r3, r4})
		scale(1, nil, []string{r3})
	})
	pt.at(10*time.Second, func() {
		require.Equal(t, pt.created[3].name, pt.stopped[len(pt.stopped)-1], "the runner that took its next job stays, though newer")
		require.Equal(t, 1, pt.busyCalls)
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", false))
}

// Runners created before the autoscaler passed starts may have taken a job
// no delivery named to the pool: their busy flags come from GitHub's list,
// and they check their registration at the usual interval.
func TestRunnersFromBeforeStartsWerePassedAreAskedAbout(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() { pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 2}) })
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 2)
		require.False(t, pt.created[0].patient)
		pt.registerAll()
		pt.busy[pt.created[1].name] = true
	})
	pt.at(3*time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true})
	})
	pt.at(4*time.Second, func() {
		require.Equal(t, 1, pt.busyCalls)
		require.Equal(t, []string{pt.created[0].name}, pt.stopped, "GitHub said which one is busy")
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", false))
}

// An ephemeral runner a job's start showed registered, whose pod then failed
// before the runner saw itself listed (RunnerID unknown), did start: the pool
// does not back off as after a runner that cannot start.
func TestARunnerRegisteredByAJobThatFailsIsNoFailedStart(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true})
	})
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 1)
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true, Running: []string{pt.created[0].name}})
	})
	pt.at(3*time.Second, func() { pt.done(pt.created[0].name, EndPodFailed) })
	pt.at(4*time.Second, func() {
		require.Len(t, pt.created, 2, "replaced at once")
		require.Zero(t, pt.state().TimeoutStreak)
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", true))
}

// A rollout's new runners check their registration at the usual interval:
// the old runners go only once new ones registered, and idle new runners take
// no job that would tell.
func TestARolloutsRunnersAreNotPatient(t *testing.T) {
	pt := newPoolTest(t)
	pt.at(time.Second, func() {
		pt.env.SignalWorkflow(contract.SignalScale, ScaleRequest{Replicas: 1, StartsDelivered: true})
	})
	pt.at(2*time.Second, func() {
		require.Len(t, pt.created, 1)
		require.True(t, pt.created[0].patient)
		pt.registerAll()
		next := spec(0, "h2", false)
		next.Generation = 2
		pt.env.SignalWorkflow(contract.SignalSpec, next)
	})
	pt.at(3*time.Second, func() {
		require.Len(t, pt.created, 2)
		require.Equal(t, "h2", pt.created[1].hash)
		require.False(t, pt.created[1].patient)
	})
	pt.deleteAndDrain(time.Minute)
	pt.run(spec(0, "h1", false))
}
