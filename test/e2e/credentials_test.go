package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// orgPool is an organization RunnerDeployment that acts with the credentials
// of the Secret secret, scaled from webhooks when withHRA.
func orgPool(name, org, secret string, withHRA bool) string {
	manifest := fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  replicas: %[4]d
  template:
    spec:
      organization: %[2]s
      labels: [linux, %[1]s]
      githubAPICredentialsFrom:
        secretRef:
          name: %[3]s
`, name, org, secret, map[bool]int{true: 0, false: 1}[withHRA])
	if !withHRA {
		return manifest
	}
	return manifest + fmt.Sprintf(`---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: %[1]s
spec:
  scaleTargetRef:
    name: %[1]s
  minReplicas: 0
  maxReplicas: 3
  scaleDownDelaySecondsAfterScaleOut: 5
  githubAPICredentialsFrom:
    secretRef:
      name: %[2]s
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`, name, secret)
}

func tokenSecret(name, token string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\nstringData:\n  github_token: %s\n", name, token)
}

// One worker serves two organizations that each accept only their own token,
// through ARC's githubAPICredentialsFrom Secrets; a pool whose Secret is missing
// gets a condition and an event while the others go on, and starts once the
// Secret is there.
// jobsRunOnEachOrgPool queues two jobs in each of org-a and org-b and checks
// that all four succeed, each on its organization's pool (pool-a, pool-b), and
// that GitHub refused no call: none was made with another scope's credentials.
func jobsRunOnEachOrgPool(t *testing.T, w *world.World, within time.Duration) {
	t.Helper()
	for _, org := range []string{"org-a", "org-b"} {
		for i := range 2 {
			w.Queue(org+"/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "pool-" + org[len(org)-1:]})
		}
	}
	require.Eventually(t, func() bool {
		done := 0
		for _, j := range w.GitHub.Jobs() {
			if j.Status == "completed" && j.Conclusion == "success" {
				done++
			}
		}
		return done == 4
	}, within, 100*time.Millisecond, "both organizations' jobs ran, each on its own pool")
	for _, j := range w.GitHub.Jobs() {
		require.True(t, strings.HasPrefix(j.RunnerName, "pool-"+j.Repo[len("org-"):len("org-x")]), "job of %s ran on %s", j.Repo, j.RunnerName)
	}
	for _, c := range w.GitHub.Calls() {
		require.NotEqual(t, http.StatusForbidden, c.Status, "a call with credentials other than its scope's: %s", c.Path)
	}
}

func TestEachPoolActsWithItsOwnGitHubCredentials(t *testing.T) {
	parallel(t)
	const ns = "credentials"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"org-a", "org-b"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	// The worker's own token (GITHUB_TOKEN) works for neither organization.
	w.GitHub.RequireToken("org-a", "token-a")
	w.GitHub.RequireToken("org-b", "token-b")
	require.NoError(t, w.Apply(ctx, strings.Join([]string{
		tokenSecret("creds-a", "token-a"), tokenSecret("creds-b", "token-b"),
		orgPool("pool-a", "org-a", "creds-a", true), orgPool("pool-b", "org-b", "creds-b", true),
		orgPool("pool-c", "org-a", "creds-c", false),
	}, "---\n")))

	accepted := func(kind, name, field string) string { return acceptedField(ctx, ns, kind, name, field) }
	require.Eventually(t, func() bool { return accepted("rdeploy", "pool-c", "reason") == "InvalidCredentials" },
		30*time.Second, 100*time.Millisecond, "the pool whose Secret is missing says so")
	require.Contains(t, accepted("rdeploy", "pool-c", "message"), "credentials/creds-c")
	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector", "reason=InvalidCredentials", "-o", "name")
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(events), "and records an event")

	jobsRunOnEachOrgPool(t, w, 60*time.Second)

	require.NoError(t, w.Apply(ctx, tokenSecret("creds-c", "token-a")))
	require.Eventually(t, func() bool { return accepted("rdeploy", "pool-c", "status") == "True" }, 60*time.Second, 200*time.Millisecond,
		"the pool starts once its Secret is there")
	require.Eventually(t, func() bool {
		for _, r := range w.GitHub.Runners() {
			if strings.HasPrefix(r.Name, "pool-c-") && r.Online {
				return true
			}
		}
		return false
	}, 60*time.Second, 200*time.Millisecond, "its runner registers with the Secret's credentials")
}
