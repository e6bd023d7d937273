package e2e

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// arcflowCLI runs an arcflow command against the stack's Temporal, as a user would.
func arcflowCLI(t *testing.T, temporalNamespace string, args ...string) (string, error) {
	cmd := exec.Command(arcflowBinary(t), args...)
	cmd.Env = append(os.Environ(), temporalEnv(temporalNamespace)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCLIScaleStatusAndSetup(t *testing.T) {
	parallel(t)
	const ns = "cli"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{Namespace: ns, RegisterDelay: 100 * time.Millisecond})
	require.NoError(t, w.Apply(ctx, fullPathRunnerDeployment))

	out, err := arcflowCLI(t, ns, "setup")
	require.NoError(t, err, out)
	for _, name := range []string{"ArcflowKind", "ArcflowPool", "ArcflowScope", "ArcflowRunnerName", "ArcflowRunnerState"} {
		require.Regexp(t, name+` +Keyword +present`, out, "the dev server has them already; setup is idempotent")
	}

	out, err = arcflowCLI(t, ns, "scale", "-n", ns, "app", "--replicas", "-1")
	require.Error(t, err)
	require.Contains(t, out, "--replicas is required and must not be negative")
	out, err = arcflowCLI(t, ns, "scale", "-n", ns, "nope", "--replicas", "2")
	require.Error(t, err)
	require.Contains(t, out, "hra/cli/nope")

	require.Eventually(t, func() bool {
		out, err = arcflowCLI(t, ns, "scale", "-n", ns, "app", "--replicas", "2", "--duration", "10m")
		return err == nil
	}, 60*time.Second, 500*time.Millisecond, "the autoscaler workflow exists: %s", out)
	require.Contains(t, out, "hra/cli/app: holding 2 replicas for 10m0s")
	require.Eventually(t, func() bool {
		return len(runnerPods(t, w)) == 2 && len(w.GitHub.Runners()) == 2
	}, 60*time.Second, 200*time.Millisecond, "two runners for the forced count")

	// A runner stopped before the forced count (the RunnerDeployment's own
	// replica, stopped while it registered) is listed until its end reaches
	// the pool, which may come after both new runners show Idle (a CI run
	// saw "Idle 2, Registering 1"): wait for the whole line.
	poolLine := regexp.MustCompile(`runnerdeployment +cli/app +2 +2 +Idle 2 +pool/cli/runnerdeployment/app`)
	require.Eventually(t, func() bool {
		out, err = arcflowCLI(t, ns, "status", "-n", ns)
		return err == nil && poolLine.MatchString(out)
	}, 30*time.Second, 500*time.Millisecond, "status shows two runners, both idle: %s", out)
	t.Logf("arcflow status:\n%s", out)
	require.Regexp(t, `hra +cli/app +2 .*forced to 2`, out)

	// The README's query command, and the memos a person sees in the Web UI.
	out, err = temporalCLI(ctx, ns, "workflow", "query", "--workflow-id", "hra/cli/app", "--name", "state")
	require.NoError(t, err, out)
	require.Contains(t, out, `"Desired":2,"Force":{"duration":"10m0s","replicas":2`)
	pods := runnerPods(t, w)
	for id, want := range map[string]string{
		"hra/cli/app":                   `"target": "RunnerDeployment/app"`,
		"pool/cli/runnerdeployment/app": `"resource": "RunnerDeployment cli/app"`,
		"runner/cli/" + pods[0]:         `"pod": "cli/` + pods[0] + `"`,
	} {
		out, err = temporalCLI(ctx, ns, "workflow", "describe", "--workflow-id", id, "--output", "json")
		require.NoError(t, err, out)
		require.Contains(t, out, want, id)
	}
}
