package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

func ownPod(name, pool, hash string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci", Labels: map[string]string{
			LabelRunner: "", LabelPool: pool, LabelRunnerDeployment: pool, LabelTemplateHash: hash,
		}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func ownSecret(runner, pool string, owned bool, data map[string][]byte, annotations map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: TokenSecretName(runner), Namespace: "ci", Annotations: annotations,
			Labels: map[string]string{LabelRunner: "", LabelPool: pool}},
		Data: data,
	}
	if owned {
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: runner, UID: "pod-uid"}}
	}
	return s
}

// A pool's runners are found by its labels: pods with their template hash,
// and a JIT runner's GitHub ID from its Secret. ARC's pods, other pools' and
// Secrets of gone pods are left out.
func TestOwnRunnersFindsThePoolsRunnersByTheirLabels(t *testing.T) {
	arcPod := ownPod("app-arc", "app", "x", corev1.PodRunning)
	delete(arcPod.Labels, LabelPool) // ARC's pods carry ARC's labels only
	k := &Kubernetes{Client: k8sfake.NewClientset(
		ownPod("app-a", "app", "h1", corev1.PodRunning),
		ownPod("app-b", "app", "h0", corev1.PodSucceeded),
		ownPod("other-a", "other", "h1", corev1.PodRunning),
		arcPod,
		ownSecret("app-a", "app", true, map[string][]byte{JITConfigSecretKey: []byte("cfg")}, map[string]string{AnnotationRunnerID: "42"}),
		ownSecret("app-b", "app", true, map[string][]byte{TokenSecretKey: []byte("t")}, nil),
		ownSecret("app-c", "app", false, map[string][]byte{TokenSecretKey: []byte("t")}, nil),
		ownSecret("app-gone", "app", true, map[string][]byte{TokenSecretKey: []byte("t")}, nil),
	)}
	got, err := k.OwnRunners(context.Background(), ARCRunnersInput{Namespace: "ci", Kind: v1alpha1.KindRunnerDeployment, Name: "app"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "app-a", got[0].Name)
	require.True(t, got[0].Own && got[0].JIT)
	require.Equal(t, int64(42), got[0].RunnerID)
	require.Equal(t, "h1", got[0].TemplateHash)
	require.True(t, got[0].Pod.Exists && !got[0].Pod.Exited())
	require.Equal(t, "app-b", got[1].Name)
	require.False(t, got[1].JIT)
	require.Equal(t, "h0", got[1].TemplateHash)
	require.True(t, got[1].Pod.Exited())
}

// A worker whose RBAC may not read runner Secrets says so at once: the pool's
// first decision does not wait on retries.
func TestOwnRunnersSaysAtOnceWhatItMayNotRead(t *testing.T) {
	kube := k8sfake.NewClientset(ownPod("app-a", "app", "h1", corev1.PodRunning))
	kube.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "app-a-registration-token", errors.New("RBAC"))
	})
	_, err := (&Kubernetes{Client: kube}).OwnRunners(context.Background(), ARCRunnersInput{Namespace: "ci", Kind: v1alpha1.KindRunnerDeployment, Name: "app"})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	require.True(t, app.NonRetryable())
	require.Equal(t, ErrTypeForbidden, app.Type())
}

// A RunnerSet's runners are its StatefulSets; one whose pod is not made yet
// counts as starting.
func TestOwnRunnersFindsARunnerSetsStatefulSets(t *testing.T) {
	set := func(name string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci", Labels: map[string]string{LabelPool: "set", LabelRunnerSet: "set"}},
			Spec:       appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelTemplateHash: "h1"}}}},
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "set-a-0", Namespace: "ci"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	k := &Kubernetes{Client: k8sfake.NewClientset(set("set-a"), set("set-b"), pod)}
	got, err := k.OwnRunners(context.Background(), ARCRunnersInput{Namespace: "ci", Kind: v1alpha1.KindRunnerSet, Name: "set"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "set-a-0", got[0].Name)
	require.Equal(t, corev1.PodRunning, got[0].Pod.Phase)
	require.Equal(t, "set-b-0", got[1].Name)
	require.Equal(t, corev1.PodPending, got[1].Pod.Phase)
	require.False(t, got[1].Pod.Exited(), "a StatefulSet whose pod is not made yet is a runner starting")
	require.Equal(t, "h1", got[1].TemplateHash)
}

// A pool taking over its runners learns the GitHub IDs of the registered ones
// from one read of the scope's runner list; one not registered is left out.
func TestRunnerIDsReadsTheScopesRunnerList(t *testing.T) {
	srv, gh, c := fakeGitHub(t)
	ctx := context.Background()
	scope := github.Scope{Repository: "octo/app"}
	tok, err := c.RegistrationToken(ctx, scope)
	require.NoError(t, err)
	registered, err := srv.Register(tok.Value(), "app-a", []string{"linux"}, true)
	require.NoError(t, err)
	_, err = srv.Register(tok.Value(), "other-b", []string{"linux"}, true)
	require.NoError(t, err)
	ids, err := gh.RunnerIDs(ctx, RunnerBusyInput{Scope: scope, Names: []string{"app-a", "app-unregistered"}})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"app-a": registered.ID}, ids)
}
