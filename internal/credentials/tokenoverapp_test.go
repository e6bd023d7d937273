package credentials

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

const appKey = "-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0LWtleS12YWx1ZQ==\n-----END RSA PRIVATE KEY-----"

// arcSecret holds a token and a GitHub App's keys, as ARC accepts.
func arcSecret(name, token, version string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: name, ResourceVersion: version}, Data: map[string][]byte{
		"github_token": []byte(token), "github_app_id": []byte("12"), "github_app_installation_id": []byte("34"),
		"github_app_private_key": []byte(appKey),
	}}
}

// The worker's own credentials: the token wins over the App's variables, as in
// ARC, and the caller learns that both were set.
func TestTokenOverAppKeepsTheToken(t *testing.T) {
	cfg, both := TokenOverApp(github.Config{Token: "ghp_x", AppID: 12, AppInstallationID: 34, AppPrivateKey: appKey, URL: "https://proxy.example.com/"})
	require.True(t, both)
	require.Equal(t, github.Config{Token: "ghp_x", URL: "https://proxy.example.com/"}, cfg)
	require.NoError(t, cfg.Validate())

	for _, only := range []github.Config{{Token: "ghp_x"}, {AppID: 12, AppInstallationID: 34, AppPrivateKey: appKey}, {AppID: 12}} {
		cfg, both := TokenOverApp(only)
		require.False(t, both)
		require.Equal(t, only, cfg, "one way to authenticate (or half an App) is left as it is")
	}
}

// A githubAPICredentialsFrom Secret with both a token and App keys works with
// the token, as in ARC; the Secret gets one event per version of it, however
// often it is read, with no value in it.
func TestASecretWithATokenAndAppKeysUsesTheToken(t *testing.T) {
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	gh.RequireToken("org-a", "token-a")
	kube := k8sfake.NewClientset(arcSecret("arc", "token-a", "1"), secret("plain", "token-a"))
	named := 0
	kube.PrependReactor("create", "events", func(action k8stesting.Action) (bool, runtime.Object, error) {
		e := action.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		named++
		e.Name = e.GenerateName + strconv.Itoa(named) // the fake does not generate names
		return false, nil, nil
	})
	r := &Resolver{Kube: kube, Worker: github.Config{Token: "worker-token", URL: gh.URL}, Recheck: 1}
	ctx := context.Background()
	events := func() []corev1.Event {
		list, err := kube.CoreV1().Events("ci").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return list.Items
	}

	require.NoError(t, r.Check(ctx, "ci/arc"), "not InvalidCredentials")
	client, err := r.For(ctx, "ci/arc")
	require.NoError(t, err)
	_, err = client.RegistrationToken(ctx, github.Scope{Organization: "org-a"})
	require.NoError(t, err, "the Secret's token")
	require.Zero(t, gh.CallCounts()["POST /app/installations/{id}/access_tokens"], "the App key was never used")
	again, err := r.For(ctx, "ci/arc")
	require.NoError(t, err)
	require.Same(t, client, again)
	require.NoError(t, r.Check(ctx, "ci/arc"))

	got := events()
	require.Len(t, got, 1, "one event however often the Secret is read")
	e := got[0]
	require.Equal(t, TokenOverAppReason, e.Reason)
	require.Equal(t, corev1.EventTypeNormal, e.Type)
	require.Equal(t, corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "ci", Name: "arc", ResourceVersion: "1"}, e.InvolvedObject)
	require.Contains(t, e.Message, "arcflow uses the token, as ARC does")
	for _, value := range []string{"token-a", "c2VjcmV0LWtleS12YWx1ZQ", "BEGIN RSA"} {
		require.NotContains(t, e.Message, value, "an event holds no value")
	}

	require.NoError(t, r.Check(ctx, "ci/plain"))
	require.Len(t, events(), 1, "a Secret with a token only gets no event")

	_, err = kube.CoreV1().Secrets("ci").Update(ctx, arcSecret("arc", "token-a", "2"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, r.Check(ctx, "ci/arc"))
	require.NoError(t, r.Check(ctx, "ci/arc"))
	require.Len(t, events(), 2, "a new version of the Secret is announced once again")
}

// An event that cannot be recorded does not cost the credentials, and is tried
// again at the next read.
func TestTokenOverAppEventIsRetriedWhenRefused(t *testing.T) {
	kube := k8sfake.NewClientset(arcSecret("arc", "token-a", "1"))
	refuse := true
	attempts := 0
	kube.PrependReactor("create", "events", func(action k8stesting.Action) (bool, runtime.Object, error) {
		attempts++
		if refuse {
			return true, nil, context.DeadlineExceeded
		}
		e := action.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		e.Name = e.GenerateName + strconv.Itoa(attempts)
		return false, nil, nil
	})
	r := &Resolver{Kube: kube, Worker: github.Config{Token: "worker-token"}, Recheck: 1}
	ctx := context.Background()
	require.NoError(t, r.Check(ctx, "ci/arc"))
	refuse = false
	require.NoError(t, r.Check(ctx, "ci/arc"))
	require.NoError(t, r.Check(ctx, "ci/arc"))
	require.Equal(t, 2, attempts, "refused once, recorded at the next read, then no more")
}
