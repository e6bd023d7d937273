package activities

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// admissionWebhookName finds the webhook named in the API server's error: a
// webhook it could not call ("failed calling webhook \"x\"") or one that
// denied the request ("admission webhook \"x\" denied the request").
var admissionWebhookName = regexp.MustCompile(`(?:failed calling webhook|admission webhook) \\?"([^"\\]+)\\?"`)

// admissionRefusal tells whether err is an admission webhook's refusal, and
// names the webhook.
func admissionRefusal(err error) (webhook string, ok bool) {
	if err == nil {
		return "", false
	}
	m := admissionWebhookName.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	return m[1], true
}

// asAdmissionRefused turns an admission webhook's refusal of a runner's
// deletion into a non-retryable AdmissionRefused error, after recording a
// Warning event on the runner's pool resource, where the operator looks
// (kubectl describe). Other errors pass through unchanged.
func (k *Kubernetes) asAdmissionRefused(ctx context.Context, ref PodRef, err error) error {
	webhook, ok := admissionRefusal(err)
	if !ok {
		return err
	}
	message := fmt.Sprintf("runner %s: the admission webhook %q refused a change arcflow needs to remove the runner; arcflow retries until it is accepted", ref.Name, webhook)
	// ARC's webhooks are named <verb>.<resource>.<its API group>.
	if strings.HasSuffix(webhook, "."+v1alpha1.GroupVersion.Group) {
		message += "; it is one of ARC's: delete ARC's MutatingWebhookConfiguration and ValidatingWebhookConfiguration (docs/migrating-from-arc.md)"
	}
	if ref.Pool != "" {
		kind := ref.Kind
		if kind == "" {
			kind = v1alpha1.KindRunnerDeployment
		}
		on := corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: ref.Pool, Namespace: ref.Namespace}
		if evErr := RecordEvent(ctx, k.Client, on, corev1.EventTypeWarning, ErrTypeAdmissionRefused, message); evErr != nil {
			slog.Warn("cannot record the admission refusal", "runner", ref.Namespace+"/"+ref.Name, "error", evErr)
		}
	}
	return temporal.NewNonRetryableApplicationError(message+": "+err.Error(), ErrTypeAdmissionRefused, nil)
}
