package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/internal/simworld"
	"github.com/arcflow/arcflow/sim"
)

// crashingRunners is a RunnerDeployment of one runner whose image crashes at
// start while crash is "true".
func crashingRunners(crash string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: broken
spec:
  replicas: 1
  template:
    spec:
      repository: octo-org/app
      labels: [linux, broken]
      env:
      - name: %s
        value: %q
`, sim.CrashAtStartEnv, crash)
}

// A runner whose pod fails at start frees its slot and is replaced with a
// backoff (10 s, 20 s, ...), not in a tight loop; once the template is fixed,
// the next runner registers within one backoff step.
func TestARunnerThatCrashesAtStartIsReplacedWithBackoff(t *testing.T) {
	const ns = "crashing"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, simworld.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, Seed: 1,
	})

	start := time.Now()
	require.NoError(t, w.Apply(ctx, crashingRunners("true")))
	require.Eventually(t, func() bool { return len(w.Runners.PodTimes()) >= 1 }, 30*time.Second, 100*time.Millisecond, "a first pod")
	// Over 35 s a tight loop would make dozens of pods; the backoff makes the
	// first, one 10 s after its failure and one 20 s after the next.
	require.Never(t, func() bool { return len(w.Runners.PodTimes()) > 3 }, 35*time.Second, 100*time.Millisecond,
		"more than 3 pods in 35 s of crashing runners")
	crashed := len(w.Runners.PodTimes())
	require.GreaterOrEqual(t, crashed, 2, "a failed runner is replaced")
	require.Empty(t, w.GitHub.Runners(), "none registered")
	condition := func(field string) string {
		out, _ := stack.Kubectl(ctx, "get", "-n", ns, "rdeploy", "broken", "-o",
			`jsonpath={.status.conditions[?(@.type=="RunnersFailing")].`+field+`}`)
		return out
	}
	require.Eventually(t, func() bool { return condition("status") == "True" }, 10*time.Second, 100*time.Millisecond,
		"the RunnersFailing condition")
	require.Equal(t, "PodFailed", condition("reason"))
	require.Contains(t, condition("message"), "runner(s) in a row could not start")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=RunnersFailing", "-o", "name")
	require.NoError(t, err)
	require.Len(t, strings.Fields(events), 1, "one event for the failing pool, not one per runner")
	metrics := readAllMetrics(t, w.WorkerMetricsURL)
	require.Contains(t, metrics, `arcflow_runner_failures_total{kind="RunnerDeployment",name="broken",namespace="`+ns+`",reason="pod-failed"}`)

	fixed := time.Now()
	require.NoError(t, w.Apply(ctx, crashingRunners("false")))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond,
		"the fixed template's runner registers")
	// The backoff after the third failure is 40 s; one step, plus the pod's start.
	recovered := time.Since(fixed)
	require.Less(t, recovered, 50*time.Second, "recovered within one backoff step")
	require.Eventually(t, func() bool { return condition("status") == "False" }, 10*time.Second, 100*time.Millisecond,
		"RunnersFailing=False once a runner registered")
	t.Logf("%d pods in the first %v of crashing; registered %v after the fix", crashed, fixed.Sub(start).Round(time.Second), recovered.Round(100*time.Millisecond))
}
