package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

// appKeyPEM is a GitHub App private key that would work against the fake
// GitHub, had arcflow used it.
func appKeyPEM(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

// tokenAndAppSecret is an ARC Secret with both a token and a GitHub App's keys.
func tokenAndAppSecret(name, token, key string) string {
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(key), "\n", "\n    ")
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: %s
stringData:
  github_token: %s
  github_app_id: "12"
  github_app_installation_id: "34"
  github_app_private_key: |
%s
`, name, token, indented)
}

// ownCredentialsPool is an organization RunnerDeployment scaled from webhooks
// that acts with the worker's own credentials.
func ownCredentialsPool(name, org string) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: %[1]s
spec:
  template:
    spec:
      organization: %[2]s
      labels: [linux, %[1]s]
---
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
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`, name, org)
}

// An ARC Secret with a token and App keys: the worker runs, with the token.
// ARC uses github_token when a Secret also holds the GitHub App keys; so does
// arcflow, for its own credentials (the Secret mounted as env) and for a
// githubAPICredentialsFrom Secret, instead of crash-looping or rejecting the
// pool at cut-over. It says so, in a warning and in one event on the Secret,
// neither with a value in it.
func TestARCSecretWithTokenAndAppKeysRunsWithTheToken(t *testing.T) {
	parallel(t)
	const ns = "arc-secrets"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	key := appKeyPEM(t)
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"org-a", "org-b"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
		// The world's GITHUB_TOKEN (ghp_simulated) and an App's variables.
		Env: []string{"GITHUB_APP_ID=12", "GITHUB_APP_INSTALLATION_ID=34", "GITHUB_APP_PRIVATE_KEY=" + key},
	})
	// An App installation token would get 403 from either organization.
	w.GitHub.RequireToken("org-a", "ghp_simulated")
	w.GitHub.RequireToken("org-b", "token-b")
	require.NoError(t, w.Apply(ctx, strings.Join([]string{
		tokenAndAppSecret("creds-b", "token-b", key),
		ownCredentialsPool("pool-a", "org-a"), orgPool("pool-b", "org-b", "creds-b", true),
	}, "---\n")))

	require.Eventually(t, func() bool {
		return acceptedField(ctx, ns, "rdeploy", "pool-b", "status") == "True" && acceptedField(ctx, ns, "hra", "pool-b", "status") == "True"
	}, 60*time.Second, 200*time.Millisecond, "the pool whose Secret holds both is accepted, not InvalidCredentials")
	jobsRunOnEachOrgPool(t, w, 90*time.Second)
	require.Zero(t, w.GitHub.CallCounts()["POST /app/installations/{id}/access_tokens"], "the App key was never used")
	require.True(t, w.Worker.Running(), "the worker runs: %s", w.Worker.ExitState())

	events, err := stack.Kubectl(ctx, "get", "events", "-n", ns, "--field-selector",
		"reason=TokenOverAppKeys,involvedObject.kind=Secret,involvedObject.name=creds-b", "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(events), "\n")
	require.Len(t, lines, 1, "one event on the Secret, however often it was read: %q", events)
	require.Contains(t, lines[0], "arcflow uses the token, as ARC does")

	log, err := os.ReadFile(w.Worker.LogPath())
	require.NoError(t, err)
	require.Contains(t, string(log), "GITHUB_TOKEN and GITHUB_APP_* are both set", "the worker warns at start")
	for _, value := range []string{"ghp_simulated", "token-b", "PRIVATE KEY-----\n", strings.Split(key, "\n")[1]} {
		require.NotContains(t, string(log), value, "the worker's log holds no credential")
		require.NotContains(t, events, value, "nor does the event")
	}
}
