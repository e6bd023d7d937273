package credentials

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

func secret(name, token string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: name}, Data: map[string][]byte{"github_token": []byte(token)}}
}

// Each Secret gets its own client, kept while the Secret's data is unchanged
// and rebuilt when it changes; a Secret that is missing or holds no credentials
// is ErrInvalid, with no value in the message.
func TestEachSecretGetsItsOwnClient(t *testing.T) {
	gh, err := fakegithub.New(fakegithub.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gh.Close() })
	gh.RequireToken("org-a", "token-a")
	gh.RequireToken("org-b", "token-b")
	kube := k8sfake.NewClientset(secret("creds-a", "token-a"), secret("creds-b", "token-b"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "junk"}, Data: map[string][]byte{"password": []byte("s3cr3t")}})
	r := &Resolver{Kube: kube, Worker: github.Config{Token: "worker-token", URL: gh.URL}, Recheck: 1}
	ctx := context.Background()

	a, err := r.For(ctx, "ci/creds-a")
	require.NoError(t, err)
	b, err := r.For(ctx, "ci/creds-b")
	require.NoError(t, err)
	require.NotSame(t, a, b)
	_, err = a.RegistrationToken(ctx, github.Scope{Organization: "org-a"})
	require.NoError(t, err, "the Secret's token, against the worker's GitHub URL")
	_, err = a.RegistrationToken(ctx, github.Scope{Organization: "org-b"})
	require.Error(t, err, "org-b takes only its own token")
	_, err = b.RegistrationToken(ctx, github.Scope{Organization: "org-b"})
	require.NoError(t, err)

	again, err := r.For(ctx, "ci/creds-a")
	require.NoError(t, err)
	require.Same(t, a, again, "unchanged data keeps the client and its caches")
	_, err = kube.CoreV1().Secrets("ci").Update(ctx, secret("creds-a", "token-a2"), metav1.UpdateOptions{})
	require.NoError(t, err)
	rotated, err := r.For(ctx, "ci/creds-a")
	require.NoError(t, err)
	require.NotSame(t, a, rotated, "a rotated Secret gets a new client")

	for _, ref := range []string{"ci/missing", "ci/junk", "no-namespace"} {
		_, err := r.For(ctx, ref)
		require.ErrorIs(t, err, ErrInvalid, ref)
		require.NotContains(t, err.Error(), "s3cr3t")
		require.ErrorIs(t, r.Check(ctx, ref), ErrInvalid)
	}
	require.NoError(t, r.Check(ctx, "ci/creds-b"))
}
