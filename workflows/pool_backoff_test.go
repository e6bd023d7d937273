package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// Five minutes of a runner image that crashes at once, each pod failing a second
// after its runner starts: the pool makes the pods the backoff allows (10 s
// doubling after each failure), not one per failure as fast as pods fail.
func TestFiveMinutesOfCrashingRunnersCostOnlyTheBackoffsPods(t *testing.T) {
	pt := newPoolTest(t)
	failed := 0
	for s := 1; s <= 300; s++ {
		pt.at(time.Duration(s)*time.Second, func() {
			for ; failed < len(pt.created); failed++ {
				pt.done(pt.created[failed].name, EndPodFailed)
			}
		})
	}
	pt.at(300*time.Second+500*time.Millisecond, func() {
		var at []time.Duration
		for _, c := range pt.created {
			at = append(at, c.at)
		}
		// Each a second of crashing plus 10, 20, 40, 80 s; the next would be at 315 s.
		require.Equal(t, []time.Duration{0, 11 * time.Second, 32 * time.Second, 73 * time.Second, 154 * time.Second}, at)
		require.Equal(t, 5, pt.status.FailingRunners)
	})
	pt.deleteAndDrain(301 * time.Second)
	pt.run(spec(1, "h1", false))
}

// A JIT pool whose image cannot start from a JIT configuration: each pod turns
// Ready (the pool hears its runner registered) and fails a second later, before
// it took a job. Ready proves nothing there: the pool backs off as for any
// runner that cannot start, and a runner that takes a job ends the streak.
func TestJITRunnersThatFailBeforeAJobBackOff(t *testing.T) {
	pt := newPoolTest(t)
	failed := 0
	for s := 1; s <= 120; s++ {
		pt.at(time.Duration(s)*time.Second, func() {
			for ; failed < len(pt.created); failed++ {
				name := pt.created[failed].name
				pt.env.SignalWorkflow(contract.SignalRunnerRegistered, RunnerRegistered{Name: name})
				pt.env.SignalWorkflow(contract.SignalRunnerDone, RunnerDone{Name: name, Reason: EndPodFailed, RunnerID: int64(100 + failed), Cause: calls.CauseRunnerDied})
			}
		})
	}
	pt.at(120*time.Second+500*time.Millisecond, func() {
		var at []time.Duration
		for _, c := range pt.created {
			at = append(at, c.at)
		}
		require.Equal(t, []time.Duration{0, 11 * time.Second, 32 * time.Second, 73 * time.Second}, at, "10, 20, 40 s after each failure, not at once")
		require.Equal(t, 4, pt.status.FailingRunners)
	})
	pt.deleteAndDrain(121 * time.Second)
	jit := spec(1, "h1", true)
	jit.Runner.JIT = true
	pt.run(jit)
}
