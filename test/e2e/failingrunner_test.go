package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// A runner whose pod fails at start frees its slot and is replaced with a
// backoff (10 s, 20 s, ...), not in a tight loop; once the template is fixed,
// the next runner registers within one backoff step.
func TestARunnerThatCrashesAtStartIsReplacedWithBackoff(t *testing.T) {
	parallel(t)
	const ns = "crashing"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 1,
	})

	start := time.Now()
	require.NoError(t, w.Apply(ctx, world.CrashingRunners("broken", "octo-org/app", true)))
	require.Eventually(t, func() bool { return len(w.Runners.PodTimes()) >= 1 }, 30*time.Second, 100*time.Millisecond, "a first pod")
	// Over 35 s a tight loop would make dozens of pods; the backoff makes the
	// first, one 10 s after its failure and one 20 s after the next.
	require.Never(t, func() bool { return len(w.Runners.PodTimes()) > 3 }, 35*time.Second, 100*time.Millisecond,
		"more than 3 pods in 35 s of crashing runners")
	crashed := len(w.Runners.PodTimes())
	require.GreaterOrEqual(t, crashed, 2, "a failed runner is replaced")
	require.Empty(t, w.GitHub.Runners(), "none registered")
	requireRunnersFailing(t, ctx, w, "broken", "PodFailed", "pod-failed")

	fixed := time.Now()
	require.NoError(t, w.Apply(ctx, world.CrashingRunners("broken", "octo-org/app", false)))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond,
		"the fixed template's runner registers")
	// The backoff after the third failure is 40 s; one step, plus the pod's start.
	recovered := time.Since(fixed)
	require.Less(t, recovered, 50*time.Second, "recovered within one backoff step")
	requireRunnersRecovered(t, ctx, w, "broken")
	t.Logf("%d pods in the first %v of crashing; registered %v after the fix", crashed, fixed.Sub(start).Round(time.Second), recovered.Round(100*time.Millisecond))
}

// runnersFailingField reads a field of a RunnerDeployment's RunnersFailing condition.
func runnersFailingField(ctx context.Context, w *world.World, rd, field string) string {
	return conditionField(ctx, w.Namespace(), "rdeploy", rd, "RunnersFailing", field)
}

// requireRunnersFailing waits for a RunnerDeployment's RunnersFailing condition
// with the reason, and checks that it came with one event, not one per runner,
// and that arcflow_runner_failures_total counts the failures under metricReason.
func requireRunnersFailing(t *testing.T, ctx context.Context, w *world.World, rd, reason, metricReason string) {
	t.Helper()
	require.Eventually(t, func() bool { return runnersFailingField(ctx, w, rd, "status") == "True" }, 10*time.Second, 100*time.Millisecond,
		"the RunnersFailing condition")
	require.Equal(t, reason, runnersFailingField(ctx, w, rd, "reason"))
	require.Contains(t, runnersFailingField(ctx, w, rd, "message"), "runner(s) in a row could not start")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", w.Namespace(), "--field-selector", "reason=RunnersFailing", "-o", "name")
	require.NoError(t, err)
	require.Len(t, strings.Fields(events), 1, "one event for the failing pool, not one per runner")
	require.Contains(t, readAllMetrics(t, w.WorkerMetricsURL),
		`arcflow_runner_failures_total{kind="RunnerDeployment",name="`+rd+`",namespace="`+w.Namespace()+`",reason="`+metricReason+`"}`)
}

// requireRunnersRecovered waits for RunnersFailing=False once GitHub lists a
// runner. The runner hears of its registration at its next check, which
// backs off up to RegistrationPollMax (30 s) and reads a runner list up to an
// interval (10 s) old: a 10 s wait failed in CI when the registration came
// just after a check.
func requireRunnersRecovered(t *testing.T, ctx context.Context, w *world.World, rd string) {
	t.Helper()
	require.Eventually(t, func() bool { return runnersFailingField(ctx, w, rd, "status") == "False" }, 60*time.Second, 100*time.Millisecond,
		"RunnersFailing=False once a runner registered")
}
