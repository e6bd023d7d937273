package worker

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// arcCauseWebhooks: ARC's admission webhooks are still registered. ARC's chart
// registers them with failurePolicy Fail for CREATE and UPDATE of runners,
// runnerdeployments and runnerreplicasets, served by the controller-manager's
// own pod: once that pod is gone, Kubernetes refuses every such write, so
// arcflow could neither release ARC's runners nor would the user's next edit
// of a RunnerDeployment be accepted.
const arcCauseWebhooks = "webhooks"

// arcWebhookConfigs names the admission webhook configurations that act on
// ARC's API group, by kind.
type arcWebhookConfigs struct {
	Mutating, Validating []string
}

func (c arcWebhookConfigs) empty() bool { return len(c.Mutating)+len(c.Validating) == 0 }

// checkWebhooks lists the admission webhook configurations and finds those
// with a rule on actions.summerwind.dev. readable is false when the worker may
// not list them (a namespaced install): the check is then skipped, and a
// refused write says why where it happens.
func (c *ARCController) checkWebhooks(ctx context.Context) (configs arcWebhookConfigs, readable bool, err error) {
	reg := c.Kube.AdmissionregistrationV1()
	mutating, err := reg.MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return arcWebhookConfigs{}, false, nil
	}
	if err != nil {
		return arcWebhookConfigs{}, true, fmt.Errorf("list mutating webhook configurations: %w", err)
	}
	validating, err := reg.ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return arcWebhookConfigs{}, false, nil
	}
	if err != nil {
		return arcWebhookConfigs{}, true, fmt.Errorf("list validating webhook configurations: %w", err)
	}
	watched := c.watchedNamespaceLabels(ctx)
	for _, m := range mutating.Items {
		for _, hook := range m.Webhooks {
			if rulesTouchARC(hook.Rules) && selectsNamespace(hook.NamespaceSelector, watched) {
				configs.Mutating = append(configs.Mutating, m.Name)
				break
			}
		}
	}
	for _, v := range validating.Items {
		for _, hook := range v.Webhooks {
			if rulesTouchARC(hook.Rules) && selectsNamespace(hook.NamespaceSelector, watched) {
				configs.Validating = append(configs.Validating, v.Name)
				break
			}
		}
	}
	sort.Strings(configs.Mutating)
	sort.Strings(configs.Validating)
	return configs, true, nil
}

// watchedNamespaceLabels are the labels of the one namespace arcflow
// watches, or nil when it watches all or may not read that namespace: every
// ARC webhook then counts.
func (c *ARCController) watchedNamespaceLabels(ctx context.Context) labels.Set {
	if c.WatchNamespace == "" {
		return nil
	}
	ns, err := c.Kube.CoreV1().Namespaces().Get(ctx, c.WatchNamespace, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	set := labels.Set{} // non-nil even for a namespace without labels: nil means "any namespace"
	maps.Copy(set, ns.Labels)
	return set
}

// selectsNamespace: a webhook with this namespaceSelector acts on the watched
// namespace (with these labels; nil: any namespace may be watched). ARC's
// chart sets one with scope.singleNamespace. A selector that does not parse
// counts as selecting it.
func selectsNamespace(selector *metav1.LabelSelector, watched labels.Set) bool {
	if watched == nil || selector == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(selector)
	return err != nil || s.Matches(watched)
}

// rulesTouchARC: a rule names ARC's API group. A wildcard group is somebody
// else's policy webhook, not ARC's, and is left alone.
func rulesTouchARC(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if g == v1alpha1.GroupVersion.Group {
				return true
			}
		}
	}
	return false
}

// arcWebhooksStatus holds arcflow back while ARC's webhooks are registered,
// with the commands that remove them.
func arcWebhooksStatus(configs arcWebhookConfigs) ARCStatus {
	if configs.empty() {
		return ARCStatus{}
	}
	var names, commands []string
	if len(configs.Mutating) > 0 {
		names = append(names, "MutatingWebhookConfiguration "+strings.Join(configs.Mutating, ", "))
		commands = append(commands, "kubectl delete mutatingwebhookconfiguration "+strings.Join(configs.Mutating, " "))
	}
	if len(configs.Validating) > 0 {
		names = append(names, "ValidatingWebhookConfiguration "+strings.Join(configs.Validating, ", "))
		commands = append(commands, "kubectl delete validatingwebhookconfiguration "+strings.Join(configs.Validating, " "))
	}
	return ARCStatus{Active: true, Cause: arcCauseWebhooks, Message: fmt.Sprintf(
		"ARC's admission webhooks are still registered (%s): with ARC's controller stopped nothing serves them, and Kubernetes refuses every change to runners, RunnerDeployments and RunnerReplicaSets; remove them with `%s`",
		strings.Join(names, "; "), strings.Join(commands, "` and `"))}
}
