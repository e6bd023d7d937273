package worker

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// arcRules are the rules of ARC v0.27's chart: CREATE and UPDATE of its kinds.
func arcRules(resources ...string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"actions.summerwind.dev"}, APIVersions: []string{"v1alpha1"}, Resources: resources},
	}}
}

// With ARC's controller stopped, its admission webhooks still hold arcflow
// back, with the commands that remove them; other webhooks (a wildcard policy
// engine's, a pod webhook of another group) do not; once they are gone the
// gate opens.
func TestARCWebhooksHoldArcflowBackUntilDeleted(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset(
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "actions-runner-controller-mutating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{
				{Name: "mutate-runner-pod.webhook.actions.summerwind.dev", Rules: []admissionregistrationv1.RuleWithOperations{{
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, Resources: []string{"pods"}}}}},
				{Name: "mutate.runnerdeployment.actions.summerwind.dev", Rules: arcRules("runnerdeployments")},
			}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "actions-runner-controller-validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.runner.actions.summerwind.dev", Rules: arcRules("runners")}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "policy-engine"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.policy.example.com", Rules: []admissionregistrationv1.RuleWithOperations{{
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, Resources: []string{"*"}}}}}}},
	)
	c, err := NewARCController(kube, testLeaseRef, DefaultARCControllerPodSelector)
	require.NoError(t, err)

	s, err := c.Check(ctx)
	require.NoError(t, err)
	require.True(t, s.Active)
	require.Equal(t, arcCauseWebhooks, s.Cause)
	require.Equal(t, "ARCWebhooksRegistered", s.Reason())
	require.Contains(t, s.Message, "`kubectl delete mutatingwebhookconfiguration actions-runner-controller-mutating-webhook-configuration`")
	require.Contains(t, s.Message, "`kubectl delete validatingwebhookconfiguration actions-runner-controller-validating-webhook-configuration`")
	require.NotContains(t, s.Message, "policy-engine", "a wildcard rule is not ARC's")

	reg := kube.AdmissionregistrationV1()
	require.NoError(t, reg.MutatingWebhookConfigurations().Delete(ctx, "actions-runner-controller-mutating-webhook-configuration", metav1.DeleteOptions{}))
	s, err = c.Check(ctx)
	require.NoError(t, err)
	require.True(t, s.Active, "the validating one is still there")
	require.NotContains(t, s.Message, "mutatingwebhookconfiguration")
	require.NoError(t, reg.ValidatingWebhookConfigurations().Delete(ctx, "actions-runner-controller-validating-webhook-configuration", metav1.DeleteOptions{}))
	s, err = c.Check(ctx)
	require.NoError(t, err)
	require.False(t, s.Active, "ARC's webhooks are gone")
}

// A worker that may not list webhook configurations (a namespaced install)
// says so once and is not held back by what it cannot see.
func TestARCWebhookCheckSkippedWhenForbidden(t *testing.T) {
	kube := fake.NewClientset()
	kube.PrependReactor("list", "mutatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errForbidden("mutatingwebhookconfigurations")
	})
	c, err := NewARCController(kube, testLeaseRef, DefaultARCControllerPodSelector)
	require.NoError(t, err)
	var warned []string
	c.Warn = func(msg string, _ ...any) { warned = append(warned, msg) }
	for range 2 {
		s, err := c.Check(context.Background())
		require.NoError(t, err)
		require.False(t, s.Active)
	}
	require.Len(t, warned, 1, "said once")
	require.Contains(t, warned[0], "does not check for ARC's webhooks")
}

func errForbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: resource}, "", nil)
}

// ARC installed for one namespace (its chart's scope.singleNamespace puts a
// namespaceSelector on its webhooks) holds back an arcflow watching that
// namespace or every namespace, not one watching another namespace.
func TestARCWebhooksOfAnotherNamespaceDoNotHoldArcflowBack(t *testing.T) {
	ctx := context.Background()
	onlyTeamA := &metav1.LabelSelector{MatchLabels: map[string]string{"name": "team-a"}}
	kube := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"name": "team-a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"name": "team-b"}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "team-a-arc-validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.runner.actions.summerwind.dev", Rules: arcRules("runners"), NamespaceSelector: onlyTeamA}}},
	)
	for watched, held := range map[string]bool{"team-a": true, "": true, "team-b": false, "no-such-namespace": true} {
		c, err := NewARCController(kube, testLeaseRef, DefaultARCControllerPodSelector)
		require.NoError(t, err)
		c.WatchNamespace = watched
		s, err := c.Check(ctx)
		require.NoError(t, err)
		require.Equal(t, held, s.Active, "watching %q", watched)
	}
}
