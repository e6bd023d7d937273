package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/arcflow/arcflow/activities/calls"
)

func TestAdmissionRefusalNamesTheWebhook(t *testing.T) {
	for _, tc := range []struct {
		err     error
		webhook string
	}{
		{apierrors.NewInternalError(errors.New(`failed calling webhook "mutate.runner.actions.summerwind.dev": failed to call webhook: Post "https://actions-runner-controller-webhook.actions-runner-system.svc:443/mutate-actions-summerwind-dev-v1alpha1-runner?timeout=10s": service "actions-runner-controller-webhook" not found`)),
			"mutate.runner.actions.summerwind.dev"},
		{errors.New(`admission webhook "validate.policy.example.com" denied the request: no`), "validate.policy.example.com"},
		{apierrors.NewConflict(corev1.Resource("pods"), "x", errors.New("changed")), ""},
		{nil, ""},
	} {
		got, ok := admissionRefusal(tc.err)
		require.Equal(t, tc.webhook != "", ok, "%v", tc.err)
		require.Equal(t, tc.webhook, got)
	}
}

// A pod deletion refused by a webhook comes back as AdmissionRefused, for the
// workflow to wait and retry, and leaves a Warning event on the pool's
// resource that names the webhook; other errors pass through as they were.
func TestARefusedRunnerDeletionIsReportedOnThePool(t *testing.T) {
	ctx := context.Background()
	kube := k8sfake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "app-x1"}})
	refuse := true
	kube.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if refuse {
			return true, nil, apierrors.NewInternalError(errors.New(`failed calling webhook "validate.pods.example.com": connection refused`))
		}
		return false, nil, nil
	})
	k := &Kubernetes{Client: kube, Defaults: DefaultPodDefaults()}
	ref := PodRef{Namespace: "ci", Name: "app-x1", Pool: "app", PoolToken: true}

	err := k.DeleteRunnerPod(ctx, ref)
	require.True(t, calls.IsErrorType(err, ErrTypeAdmissionRefused), "%v", err)
	events, err := kube.CoreV1().Events("ci").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, events.Items, 1)
	ev := events.Items[0]
	require.Equal(t, corev1.EventTypeWarning, ev.Type)
	require.Equal(t, ErrTypeAdmissionRefused, ev.Reason)
	require.Equal(t, "RunnerDeployment", ev.InvolvedObject.Kind)
	require.Equal(t, "app", ev.InvolvedObject.Name)
	require.Contains(t, ev.Message, `"validate.pods.example.com"`)
	require.NotContains(t, ev.Message, "ARC's", "not one of ARC's webhooks")

	refuse = false
	require.NoError(t, k.DeleteRunnerPod(ctx, ref), "accepted once the webhook is fixed")
	_, err = kube.CoreV1().Pods("ci").Get(ctx, "app-x1", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err))
}
