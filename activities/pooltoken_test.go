package activities

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// secretWrites counts the Secret requests that change something.
func secretWrites(kube *k8sfake.Clientset) map[string]int {
	counts := map[string]int{}
	for _, a := range kube.Actions() {
		if a.GetResource().Resource == "secrets" && a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			counts[a.GetVerb()]++
		}
	}
	return counts
}

// clock is GitHub's and the token cache's time, moved by the test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func poolTokenWorld(t *testing.T) (*fakegithub.Server, *Kubernetes, *k8sfake.Clientset, *clock) {
	c := &clock{now: time.Now()}
	srv, client := fakeGitHubClient(t, fakegithub.Options{Now: c.Now}, github.Options{Now: c.Now})
	kube := k8sfake.NewClientset()
	return srv, &Kubernetes{Client: kube, Tokens: client, Defaults: DefaultPodDefaults()}, kube, c
}

// The runners of a RunnerDeployment read one Secret, owned by the pool and
// written once per token: a burst of runners makes no Secret write after the
// first, and deleting a runner deletes no Secret.
func TestRunnersOfAPoolShareOneTokenSecret(t *testing.T) {
	srv, k, kube, _ := poolTokenWorld(t)
	ctx := context.Background()
	in := input(v1alpha1.RunnerConfig{Organization: "octo-org", Labels: []string{"linux"}})

	var outs []RunnerPodOutput
	for _, name := range []string{"app-x1", "app-x2", "app-x3"} {
		in.Name = name
		out, err := k.EnsureRunnerPod(ctx, in)
		require.NoError(t, err)
		require.True(t, out.Created)
		require.True(t, out.PoolToken)
		outs = append(outs, out)
		pod, err := kube.CoreV1().Pods("ci").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, PoolTokenSecretName(in), env(*container(pod, "runner"))[TokenSecretKey].ValueFrom.SecretKeyRef.Name)
	}
	require.Equal(t, map[string]int{"create": 1}, secretWrites(kube), "one Secret for the three runners")
	secrets, err := kube.CoreV1().Secrets("ci").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, secrets.Items, 1)
	secret := secrets.Items[0]
	require.Equal(t, "app", secret.Labels[LabelPool])
	require.NotContains(t, secret.Labels, LabelRunner, "not a runner's Secret")
	require.Equal(t, "RunnerDeployment", secret.OwnerReferences[0].Kind, "deleted with the pool")
	require.Nil(t, secret.OwnerReferences[0].Controller)
	require.Equal(t, 1, srv.CallCounts()["POST /orgs/{org}/actions/runners/registration-token"])
	require.Equal(t, srv.IssuedTokens(), []string{secret.StringData[TokenSecretKey]}, "the Secret holds the token GitHub issued")

	require.NoError(t, k.DeleteRunnerPod(ctx, PodRef{Namespace: "ci", Name: "app-x1", UID: outs[0].UID, PoolToken: true}))
	require.Equal(t, map[string]int{"create": 1}, secretWrites(kube), "the runner's deletion leaves the pool's Secret")
	_, err = kube.CoreV1().Pods("ci").Get(ctx, "app-x1", metav1.GetOptions{})
	require.Error(t, err, "the pod is gone")
}

// A new token (the cached one has under 30 minutes left) is written once into
// the Secret; one deleted by hand is back within a minute.
func TestThePoolTokenSecretFollowsTheToken(t *testing.T) {
	_, k, kube, clock := poolTokenWorld(t)
	ctx := context.Background()
	in := input(v1alpha1.RunnerConfig{Organization: "octo-org", Labels: []string{"linux"}})
	_, err := k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	first := poolSecretToken(t, kube, in)

	clock.Add(31 * time.Minute)
	for _, name := range []string{"app-x2", "app-x3"} {
		in.Name = name
		_, err = k.EnsureRunnerPod(ctx, in)
		require.NoError(t, err)
	}
	require.NotEqual(t, first, poolSecretToken(t, kube, in), "the new token is in the Secret")
	require.Equal(t, map[string]int{"create": 1, "update": 1}, secretWrites(kube))

	require.NoError(t, kube.CoreV1().Secrets("ci").Delete(ctx, PoolTokenSecretName(in), metav1.DeleteOptions{}))
	k.poolTokens.written["ci/"+PoolTokenSecretName(in)] = writtenToken{} // as if a minute had passed
	in.Name = "app-x4"
	_, err = k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.NotEmpty(t, poolSecretToken(t, kube, in), "made again")
}

func poolSecretToken(t *testing.T, kube *k8sfake.Clientset, in RunnerPodInput) string {
	secret, err := kube.CoreV1().Secrets(in.Namespace).Get(context.Background(), PoolTokenSecretName(in), metav1.GetOptions{})
	require.NoError(t, err)
	return secret.StringData[TokenSecretKey]
}

// A JIT runner keeps a Secret of its own; another scope gets
// another pool Secret; a Secret of that name that is not the pool's is refused,
// not overwritten, and the error holds no token.
func TestWhoReadsWhichTokenSecret(t *testing.T) {
	org := input(v1alpha1.RunnerConfig{Organization: "octo-org"})
	repo := input(v1alpha1.RunnerConfig{Repository: "octo-org/app"})
	require.NotEqual(t, PoolTokenSecretName(org), PoolTokenSecretName(repo), "a scope per Secret")
	set := org
	set.Kind = v1alpha1.KindRunnerSet
	require.NotEqual(t, PoolTokenSecretName(org), PoolTokenSecretName(set), "a RunnerSet of the same name has its own")
	require.Equal(t, PoolTokenSecretName(org), runnerSecretName(org))
	jit := org
	jit.JIT = true
	require.Equal(t, TokenSecretName("app-x1"), runnerSecretName(jit))

	_, k, kube, _ := poolTokenWorld(t)
	ctx := context.Background()
	_, err := kube.CoreV1().Secrets("ci").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: PoolTokenSecretName(org), Namespace: "ci"},
		StringData: map[string]string{TokenSecretKey: "theirs"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = k.EnsureRunnerPod(ctx, org)
	require.ErrorContains(t, err, "is not the pool's token secret")
	require.Equal(t, "theirs", poolSecretToken(t, kube, org), "left alone")
	_, err = kube.CoreV1().Pods("ci").Get(ctx, "app-x1", metav1.GetOptions{})
	require.Error(t, err, "no pod reads a Secret that is not the pool's")
}

// A retry that finds a pod an earlier version made, reading a Secret of its
// own, refreshes that Secret and says so, so the runner's deletion removes it.
func TestARetryKeepsTheSecretOfAnEarlierVersionsPod(t *testing.T) {
	_, k, kube, _ := poolTokenWorld(t)
	ctx := context.Background()
	in := input(v1alpha1.RunnerConfig{Organization: "octo-org"})
	old := BuildRunnerPod(in, k.Defaults)
	for i := range old.Spec.Containers[0].Env {
		if e := &old.Spec.Containers[0].Env[i]; e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			e.ValueFrom.SecretKeyRef.Name = TokenSecretName(in.Name)
		}
	}
	_, err := kube.CoreV1().Pods("ci").Create(ctx, old, metav1.CreateOptions{})
	require.NoError(t, err)

	out, err := k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.False(t, out.Created)
	require.False(t, out.PoolToken, "its own Secret is deleted with it")
	own, err := kube.CoreV1().Secrets("ci").Get(ctx, TokenSecretName(in.Name), metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, own.StringData[TokenSecretKey], "refreshed")

	kube.ClearActions()
	require.NoError(t, k.DeleteRunnerPod(ctx, PodRef{Namespace: "ci", Name: in.Name}))
	require.Equal(t, map[string]int{"delete": 1}, secretWrites(kube))
	var deleted []string
	for _, a := range kube.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok {
			deleted = append(deleted, d.GetResource().Resource+"/"+d.GetName())
		}
	}
	require.Equal(t, []string{"pods/app-x1", "secrets/app-x1-registration-token"}, deleted)
}

// A RunnerSet's runners read the pool's Secret too, from their StatefulSet's
// template; a StatefulSet an earlier version made keeps reading its own.
func TestRunnerSetRunnersShareThePoolTokenSecret(t *testing.T) {
	_, k, kube, _ := poolTokenWorld(t)
	ctx := context.Background()
	rs := v1alpha1.RunnerSetSpec{RunnerConfig: v1alpha1.RunnerConfig{Organization: "octo-org"}, StatefulSetSpec: appsv1.StatefulSetSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "runner"}}}},
	}}
	in := RunnerPodInput{Namespace: "ci", Name: "rs-abcde-0", Pool: "rs", Kind: v1alpha1.KindRunnerSet, Spec: RunnerSetPodSpec(&rs), StatefulSet: &rs.StatefulSetSpec}
	out, err := k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.True(t, out.Created)
	require.True(t, out.PoolToken)
	sts, err := kube.AppsV1().StatefulSets("ci").Get(ctx, StatefulSetName(in.Name), metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, readsSecret(&corev1.Pod{Spec: sts.Spec.Template.Spec}, PoolTokenSecretName(in)))
	require.Equal(t, map[string]int{"create": 1}, secretWrites(kube), "the pool's Secret, none of the runner's own")

	again, err := k.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.True(t, again.PoolToken, "a retry finds the StatefulSet reading the pool's Secret")

	old := in
	old.Name = "rs-fghij-0"
	oldSet := BuildRunnerStatefulSet(old, k.Defaults)
	for i := range oldSet.Spec.Template.Spec.Containers[0].Env {
		if e := &oldSet.Spec.Template.Spec.Containers[0].Env[i]; e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			e.ValueFrom.SecretKeyRef.Name = TokenSecretName(old.Name)
		}
	}
	_, err = kube.AppsV1().StatefulSets("ci").Create(ctx, oldSet, metav1.CreateOptions{})
	require.NoError(t, err)
	found, err := k.EnsureRunnerPod(ctx, old)
	require.NoError(t, err)
	require.False(t, found.PoolToken, "its own Secret is deleted with it")
}

// Two worker replicas fetch tokens of their own: the newest stays in the
// Secret, and a replica holding an older one leaves it instead of the two
// overwriting each other.
func TestReplicasDoNotOverwriteEachOthersToken(t *testing.T) {
	srv, first, kube, clock := poolTokenWorld(t)
	client, err := github.New(github.Config{Token: "ghp_test", URL: srv.URL}, github.Options{Now: clock.Now})
	require.NoError(t, err)
	second := &Kubernetes{Client: kube, Tokens: client, Defaults: DefaultPodDefaults()}
	ctx := context.Background()
	in := input(v1alpha1.RunnerConfig{Organization: "octo-org"})

	for i, k := range []*Kubernetes{first, second, first, second} {
		in.Name = fmt.Sprintf("app-r%d", i)
		_, err := k.EnsureRunnerPod(ctx, in)
		require.NoError(t, err)
	}
	require.Len(t, srv.IssuedTokens(), 2, "each replica has a token of its own")
	require.Zero(t, secretWrites(kube)["update"], "the second replica's token is no newer: the first stays")
	in.Name = "app-r0"
	pod, err := kube.CoreV1().Pods("ci").Get(ctx, "app-r3", metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, readsSecret(pod, PoolTokenSecretName(in)), "both replicas' runners read the one Secret")

	clock.Add(31 * time.Minute) // both replicas fetch new tokens
	second.poolTokens.written = nil
	in.Name = "app-r4"
	_, err = second.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	newest := poolSecretToken(t, kube, in)
	first.poolTokens.written = nil
	in.Name = "app-r5"
	_, err = first.EnsureRunnerPod(ctx, in)
	require.NoError(t, err)
	require.Equal(t, newest, poolSecretToken(t, kube, in), "an equally new token does not replace it")
	require.Equal(t, 1, secretWrites(kube)["update"], "one write for the new tokens of both replicas")
}
