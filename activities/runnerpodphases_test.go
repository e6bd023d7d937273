package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
)

func poolPod(name, pool string, phase corev1.PodPhase, deleting bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci", Labels: map[string]string{LabelRunner: "", LabelPool: pool}},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if deleting {
		now := metav1.Now()
		pod.DeletionTimestamp = &now
		pod.Finalizers = []string{"test/keep"}
	}
	return pod
}

func TestRunnerPodPhasesReportsTheNamedRunnersOfThePool(t *testing.T) {
	kube := k8sfake.NewClientset(
		poolPod("app-pending", "app", corev1.PodPending, false),
		poolPod("app-running", "app", corev1.PodRunning, false),
		poolPod("app-failed", "app", corev1.PodFailed, false),
		poolPod("app-leaving", "app", corev1.PodRunning, true),
		poolPod("app-unasked", "app", corev1.PodRunning, false),
		poolPod("other-running", "other", corev1.PodRunning, false),
	)
	k := &Kubernetes{Client: kube}
	got, err := k.RunnerPodPhases(context.Background(), RunnerPodPhasesInput{
		Namespace: "ci", Pool: "app",
		Names: []string{"app-pending", "app-running", "app-failed", "app-leaving", "app-gone", "other-running"},
	})
	require.NoError(t, err)
	require.Equal(t, map[string]corev1.PodPhase{
		"app-pending": corev1.PodPending, "app-running": corev1.PodRunning, "app-failed": corev1.PodFailed,
	}, got, "deleting, missing, unasked and other pools' pods are left out")
}
