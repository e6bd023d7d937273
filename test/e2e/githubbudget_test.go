package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/world"
)

// deferredCalls sums arcflow_github_deferred_calls_total in a metrics page.
func deferredCalls(page string) float64 {
	var sum float64
	for _, m := range regexp.MustCompile(`(?m)^arcflow_github_deferred_calls_total\{[^}]*\} (\S+)$`).FindAllStringSubmatch(page, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}

// With GitHub allowing 8 calls a 40 s window, arcflow plans within half of
// them: once the window's calls, the organization's other tools' included,
// pass that, it puts off its reconciles and runner-list refreshes until the
// window resets, while scaling goes on: every job runs, no call is refused for
// the limit, and the deferred reconciles run again after the reset. The HRA's
// GitHubBudget condition says so, and clears. (Since busy state and
// registrations come from deliveries this load makes about 3 calls in all; it
// spent 30 a window before, so another tool spends 5 of the first window here.)
func TestScalingGoesOnWithinASmallRateLimit(t *testing.T) {
	parallel(t)
	const ns = "github-budget"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"budget-org"}, RegisterDelay: time.Second, JobDuration: 3 * time.Second, Seed: 28,
		Env: []string{"ARCFLOW_RECONCILE_PERIOD=5s", "ARCFLOW_GITHUB_RUNNER_LIST_INTERVAL=1s"},
	})
	manifest := `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: budget
spec:
  replicas: 0
  template:
    spec:
      repository: budget-org/app
      labels: [linux, budget]
---
` + world.WebhookHRA("budget", v1alpha1.KindRunnerDeployment, 5, 5)
	logWorldOnFailure(t, w, ns, "budget")
	require.NoError(t, w.Apply(ctx, manifest))
	require.Eventually(t, func() bool {
		out, _ := stack.JSONPath(ctx, ns, "hra", "budget", "{.status.desiredReplicas}")
		return out == "0"
	}, 60*time.Second, 200*time.Millisecond, "the autoscaler runs")
	const window = 40 * time.Second
	w.GitHub.EnforceRateLimit(8, window)
	started := time.Now()
	for range 5 { // another tool of the organization, with the same token
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.GitHub.URL+"repos/budget-org/app/actions/runners", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer ghp_simulated")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}

	const jobs = 20
	for i := range jobs {
		w.Queue("budget-org/app", fmt.Sprintf("job-%d", i), []string{"self-hosted", "linux", "budget"})
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second): // the load's pace, not a wait for arcflow
		}
	}
	require.Eventually(t, func() bool {
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" && j.Conclusion == "success" {
				done++
			}
		}
		return done == jobs
	}, 2*time.Minute, 200*time.Millisecond, "every job ran")
	perEndpoint := map[string]int{}
	for _, c := range w.GitHub.Calls() {
		perEndpoint[fmt.Sprintf("%s %d", c.Endpoint, c.Status)]++
	}
	t.Logf("GitHub calls so far, by endpoint and status: %v", perEndpoint)
	require.Eventually(t, func() bool { return deferredCalls(readAllMetrics(t, w.WorkerMetricsURL)) > 0 }, window, 500*time.Millisecond,
		"arcflow put calls off once its share was spent")
	deferredAt := time.Now()
	budgetReason := func() string { return conditionField(ctx, ns, "hra", "budget", "GitHubBudget", "reason") }
	require.Eventually(t, func() bool { return budgetReason() == "Throttled" }, window, 500*time.Millisecond,
		"the HRA says that arcflow throttles itself")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=GitHubBudgetThrottled", "-o", "name")
	require.NoError(t, err)
	require.NotEmpty(t, events, "with a Warning event")
	for _, c := range w.GitHub.Calls() {
		require.NotEqual(t, 403, c.Status, "no call refused for the rate limit: %s %s at %v", c.Method, c.Path, c.At.Sub(started))
	}
	// The reconcile asks again once a window reset.
	runLists := func(after time.Time) int {
		n := 0
		for _, c := range w.GitHub.Calls() {
			if c.Endpoint == "GET /repos/{owner}/{repo}/actions/runs" && c.At.After(after) {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return runLists(deferredAt) > 0 }, 2*window, 500*time.Millisecond,
		"the deferred reconcile runs after the window's reset")
	require.Eventually(t, func() bool { return budgetReason() == "WithinBudget" }, 2*window, 500*time.Millisecond,
		"the condition clears once the window reset")
	calls := len(w.GitHub.Calls())
	t.Logf("%d jobs ran within 8 calls per %v: %d GitHub calls in %v, %.0f deferred, none refused",
		jobs, window, calls, time.Since(started).Round(time.Second), deferredCalls(readAllMetrics(t, w.WorkerMetricsURL)))
}
