package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ARC v0.27.6's chart, installed as actions-runner-controller, serves its
// webhooks through this Service, from its controller-manager's pod.
const arcWebhookService = "actions-runner-controller-webhook"

// registerARCWebhooks registers ARC's admission webhooks as its chart does,
// two configurations named after the release (here <ns>-arc), with nothing
// serving them (as after the guide's "scale ARC to 0"). failurePolicy Fail:
// every CREATE or UPDATE they match is refused. They are limited to the
// test's namespace, as ARC's chart limits them with scope.singleNamespace, so
// other tests on the shared stack are neither refused nor held back; within
// it they refuse exactly what ARC's would.
func registerARCWebhooks(t *testing.T, ctx context.Context, arcNamespace, ns string) {
	arcMutatingWebhooks, arcValidatingWebhooks := ns+"-arc-mutating-webhook-configuration", ns+"-arc-validating-webhook-configuration"
	kube, err := stack.Kube()
	require.NoError(t, err)
	_, err = kube.CoreV1().Services(arcNamespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: arcWebhookService},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}},
			Selector: map[string]string{"app.kubernetes.io/name": "actions-runner-controller"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	service := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: arcNamespace, Name: arcWebhookService, Path: ptr.To(path)}}
	}
	inTest := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	rules := func(resource string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"actions.summerwind.dev"}, APIVersions: []string{"v1alpha1"},
				Resources: []string{resource}},
		}}
	}
	fail, none := ptr.To(admissionregistrationv1.Fail), ptr.To(admissionregistrationv1.SideEffectClassNone)
	var mutating []admissionregistrationv1.MutatingWebhook
	var validating []admissionregistrationv1.ValidatingWebhook
	for _, resource := range []string{"runner", "runnerdeployment", "runnerreplicaset"} {
		mutating = append(mutating, admissionregistrationv1.MutatingWebhook{
			Name: "mutate." + resource + ".actions.summerwind.dev", ClientConfig: service("/mutate-actions-summerwind-dev-v1alpha1-" + resource),
			Rules: rules(resource + "s"), FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: []string{"v1beta1"}, NamespaceSelector: inTest,
		})
		validating = append(validating, admissionregistrationv1.ValidatingWebhook{
			Name: "validate." + resource + ".actions.summerwind.dev", ClientConfig: service("/validate-actions-summerwind-dev-v1alpha1-" + resource),
			Rules: rules(resource + "s"), FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: []string{"v1beta1"}, NamespaceSelector: inTest,
		})
	}
	// The runner pods' token injection: pods carrying ARC's label only.
	mutating = append(mutating, admissionregistrationv1.MutatingWebhook{
		Name: "mutate-runner-pod.webhook.actions.summerwind.dev", ClientConfig: service("/mutate-runner-set-pod"),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}},
		ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"actions-runner-controller/inject-registration-token": "true"}},
		FailurePolicy:  fail, SideEffects: none, AdmissionReviewVersions: []string{"v1beta1"}, NamespaceSelector: inTest,
	})
	reg := kube.AdmissionregistrationV1()
	_, err = reg.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: arcMutatingWebhooks}, Webhooks: mutating}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = reg.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: arcValidatingWebhooks}, Webhooks: validating}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), "delete", "mutatingwebhookconfiguration", arcMutatingWebhooks, "--ignore-not-found")
		_, _ = stack.Kubectl(context.Background(), "delete", "validatingwebhookconfiguration", arcValidatingWebhooks, "--ignore-not-found")
	})
}

// userEdit is the user's next change of their resource: an annotation, an
// UPDATE that ARC's webhooks must admit.
func userEdit(ctx context.Context, ns, resource, name string) (string, error) {
	return stack.Kubectl(ctx, "annotate", "--overwrite", "-n", ns, resource, name, fmt.Sprintf("team/edited-at=%d", time.Now().UnixNano()))
}

// quotedCommand finds the commands a condition's message gives in backticks.
var quotedCommand = regexp.MustCompile("`(kubectl [^`]+)`")

// removeARCWebhooksAsTold waits for arcflow to name ARC's webhooks on the
// resource, checks that they refuse the user's edit meanwhile, and runs the
// commands the condition gives, as an operator would copy them.
func removeARCWebhooksAsTold(t *testing.T, ctx context.Context, ns, resource, name string, within time.Duration) (removed time.Time) {
	require.Eventually(t, func() bool {
		return acceptedField(ctx, ns, resource, name, "reason") == "ARCWebhooksRegistered"
	}, within, 200*time.Millisecond, "arcflow names ARC's webhooks once ARC's controller is gone")
	if resource == "rdeploy" {
		out, err := userEdit(ctx, ns, resource, name)
		require.Error(t, err, "ARC's unserved webhooks refuse the edit: %s", out)
		require.Contains(t, out, "failed calling webhook")
	}
	message := acceptedField(ctx, ns, resource, name, "message")
	commands := quotedCommand.FindAllStringSubmatch(message, -1)
	require.Len(t, commands, 2, "one command per configuration: %s", message)
	for _, c := range commands {
		out, err := stack.Kubectl(ctx, strings.Fields(strings.TrimPrefix(c[1], "kubectl "))...)
		require.NoError(t, err, "%s: %s", c[1], out)
	}
	return time.Now()
}

// failedWorkflows lists the workflows of a namespace that failed or timed out.
func failedWorkflows(t *testing.T, ctx context.Context, ns string) []string {
	tc := dialTemporal(t, ns)
	var failed []string
	for _, prefix := range []string{"runner/", "pool/", "hra/"} {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId STARTS_WITH '%s%s/' AND ExecutionStatus IN ('Failed', 'TimedOut', 'Terminated')", prefix, ns),
		})
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			failed = append(failed, e.GetExecution().GetWorkflowId()+" "+e.GetStatus().String())
		}
	}
	return failed
}
