package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

func jitInput() RunnerPodInput {
	in := input(v1alpha1.RunnerConfig{Organization: "octo-org", Labels: []string{"linux"}})
	in.JIT = true
	return in
}

// A JIT runner's pod reads its configuration from its Secret and has no token.
func TestJITRunnerPodStartsFromItsConfiguration(t *testing.T) {
	e := env(*container(BuildRunnerPod(jitInput(), DefaultPodDefaults()), "runner"))
	require.NotContains(t, e, "RUNNER_TOKEN")
	ref := e[JITConfigSecretKey].ValueFrom.SecretKeyRef
	require.Equal(t, TokenSecretName("app-x1"), ref.Name)
	require.Equal(t, JITConfigSecretKey, ref.Key)
	require.Empty(t, e[JITConfigSecretKey].Value, "never in the pod spec")
}

// EnsureRunnerPod registers a JIT runner, writes its configuration into the
// Secret and returns its GitHub ID; a retry returns the same runner without a
// second registration; a registration whose Secret was never written is
// replaced.
func TestEnsureJITRunnerIsIdempotent(t *testing.T) {
	srv, _, client := fakeGitHub(t)
	kube := k8sfake.NewClientset()
	k := &Kubernetes{Client: kube, Tokens: client, Defaults: DefaultPodDefaults()}
	ctx := context.Background()

	out, err := k.EnsureRunnerPod(ctx, jitInput())
	require.NoError(t, err)
	require.True(t, out.Created)
	runner, ok := srv.Runner("app-x1")
	require.True(t, ok, "registered by the activity")
	require.Equal(t, runner.ID, out.RunnerID)
	secret, err := kube.CoreV1().Secrets("ci").Get(ctx, TokenSecretName("app-x1"), metav1.GetOptions{})
	require.NoError(t, err)
	config := secret.StringData[JITConfigSecretKey]
	require.NotEmpty(t, config)
	require.NotContains(t, secret.StringData, TokenSecretKey)
	require.Zero(t, srv.CallCounts()["POST /orgs/{org}/actions/runners/registration-token"], "no registration token")

	again, err := k.EnsureRunnerPod(ctx, jitInput())
	require.NoError(t, err)
	require.Equal(t, out.RunnerID, again.RunnerID, "a retry keeps the runner its first attempt registered")
	started, err := srv.StartJIT(config)
	require.NoError(t, err, "the Secret still holds the first configuration")
	require.Equal(t, out.RunnerID, started.ID)

	// The runner ran its job and GitHub removed it, ephemeral, before a retry
	// (a worker killed in the runner's first workflow task): the retry keeps
	// what the Secret says, and registers no runner that nobody would start.
	require.NoError(t, client.RemoveRunner(ctx, github.Scope{Organization: "octo-org"}, out.RunnerID))
	late, err := k.EnsureRunnerPod(ctx, jitInput())
	require.NoError(t, err)
	require.Equal(t, out.RunnerID, late.RunnerID)
	_, listed := srv.Runner("app-x1")
	require.False(t, listed, "not registered again")

	// An attempt that registered "app-x2" and died before writing its Secret.
	lost, err := client.GenerateJITConfig(ctx, github.Scope{Organization: "octo-org"}, github.JITRequest{Name: "app-x2", Labels: []string{"linux"}})
	require.NoError(t, err)
	in := jitInput()
	in.Name = "app-x2"
	fresh, err := k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.NotEqual(t, lost.RunnerID, fresh.RunnerID, "the registration without a configuration is replaced")
	runner, _ = srv.Runner("app-x2")
	require.Equal(t, fresh.RunnerID, runner.ID)
}

// A runner group GitHub does not know is a spec error, not something to retry.
func TestEnsureJITRunnerInAnUnknownGroupIsRefused(t *testing.T) {
	_, _, client := fakeGitHub(t)
	k := &Kubernetes{Client: k8sfake.NewClientset(), Tokens: client, Defaults: DefaultPodDefaults()}
	in := jitInput()
	in.Spec.Group = "nope"
	_, err := k.EnsureRunnerPod(context.Background(), in)
	require.True(t, calls.IsErrorType(err, ErrTypeGitHubRefused), "got %v", err)
}
