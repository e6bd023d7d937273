package worker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// The defaults of ARC's legacy controller-manager as its Helm chart installs it:
// leader election on, with this Lease in the release's namespace, and pods
// carrying the chart's name label (its webhook server's pods are named
// actions-runner-controller-github-webhook-server, so they do not match).
const (
	DefaultARCControllerLease       = "actions-runner-system/actions-runner-controller"
	DefaultARCControllerPodSelector = "app.kubernetes.io/name=actions-runner-controller"
)

// arcLeaseDurationDefault is controller-runtime's lease duration, used for a
// Lease that names a holder but no duration.
const arcLeaseDurationDefault = 15 * time.Second

// arcClockSkew is how far ahead of this process's clock ARC's may be: a Lease's
// renewTime is written by ARC's clock and read against ours, so it counts as
// held this much longer. Nodes of one cluster keep time within it.
const arcClockSkew = 2 * time.Second

// ARCController tells whether ARC's legacy controller-manager runs, so that
// arcflow never acts on a resource ARC reconciles too. ARC is alive while its
// leader-election Lease is held and renewed within its duration, or, with ARC's
// leader election off (no Lease, or one that lapsed), while one of its pods is
// Running.
type ARCController struct {
	Kube kubernetes.Interface
	// Namespace and Lease name ARC's leader-election Lease; its pods are looked
	// for in Namespace too.
	Namespace, Lease string
	// PodSelector finds ARC's controller-manager pods; empty skips the pods.
	PodSelector string
	// WatchNamespace is the one namespace arcflow watches (--watch-namespace),
	// empty for all. ARC's webhooks whose namespaceSelector leaves it out (ARC
	// installed with scope.singleNamespace for another namespace) cannot
	// refuse arcflow's writes there, so they do not hold arcflow back.
	WatchNamespace string

	// Warn, when set, is told once that the admission webhook check is
	// skipped for want of permission.
	Warn func(msg string, args ...any)
	// webhooksUnreadable: the worker may not list webhook configurations.
	webhooksUnreadable bool

	// lastRenew is the Lease's renewTime at the previous check, lastRead when
	// that check read it, and renewedAfter the lastRead before the latest
	// renewTime change a check saw: ARC renewed after it, by this process's
	// clock. A renewal seen happening is trusted whatever ARC's clock wrote
	// (client-go's leader election counts a lease the same way, from when it
	// saw the record change), and counting from the read before it never
	// holds arcflow back past the Lease's true expiry.
	lastRenew, lastRead, renewedAfter time.Time
}

// NewARCController checks ARC's Lease named "namespace/name" and its pods
// matching podSelector; an empty lease disables the check (nil, nil).
func NewARCController(kube kubernetes.Interface, lease, podSelector string) (*ARCController, error) {
	if lease == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(lease, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--arc-controller-lease %q: want namespace/name, or empty to skip the check", lease)
	}
	if _, err := labels.Parse(podSelector); err != nil {
		return nil, fmt.Errorf("--arc-controller-pod-selector %q: %w", podSelector, err)
	}
	return &ARCController{Kube: kube, Namespace: ns, Lease: name, PodSelector: podSelector}, nil
}

// ARCStatus is one answer of the check.
type ARCStatus struct {
	Active bool
	// Cause is what showed ARC alive (arcCauseLease, arcCausePods), or
	// arcCauseUnknown when no check has succeeded yet; empty when ARC is not
	// active. A change of Active or Cause is a change of state.
	Cause string
	// Message says what runs and what to stop, for a condition and an event.
	Message string
}

const (
	arcCauseLease   = "lease"
	arcCausePods    = "pods"
	arcCauseUnknown = "unknown"
)

// Reason is the Accepted=False condition's reason while s holds arcflow back.
func (s ARCStatus) Reason() string {
	switch s.Cause {
	case arcCauseUnknown:
		return "ARCControllerUnknown"
	case arcCauseWebhooks:
		return "ARCWebhooksRegistered"
	}
	return "ARCControllerActive"
}

func (c *ARCController) ref() string { return c.Namespace + "/" + c.Lease }

// Check reads ARC's Lease and, unless the Lease shows ARC alive, lists its
// pods, and then ARC's admission webhooks.
func (c *ARCController) Check(ctx context.Context) (ARCStatus, error) {
	status, err := c.checkController(ctx)
	if err != nil || status.Active || c.webhooksUnreadable {
		return status, err
	}
	configs, readable, err := c.checkWebhooks(ctx)
	if err != nil {
		return ARCStatus{}, err
	}
	if !readable {
		c.webhooksUnreadable = true
		if c.Warn != nil {
			c.Warn("cannot list admission webhook configurations (forbidden): arcflow does not check for ARC's webhooks; a write they refuse is reported on the runner and retried",
				"hint", "grant the worker list on mutatingwebhookconfigurations and validatingwebhookconfigurations")
		}
		return status, nil
	}
	return arcWebhooksStatus(configs), nil
}

// checkController tells whether ARC's controller-manager runs.
func (c *ARCController) checkController(ctx context.Context) (ARCStatus, error) {
	read := time.Now()
	lease, err := c.Kube.CoordinationV1().Leases(c.Namespace).Get(ctx, c.Lease, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		lease = nil
	case err != nil:
		return ARCStatus{}, fmt.Errorf("read ARC's Lease %s: %w", c.ref(), err)
	}
	now := time.Now()
	if lease != nil {
		renew := leaseRenewTime(lease)
		if !c.lastRenew.IsZero() && !renew.Equal(c.lastRenew) {
			c.renewedAfter = c.lastRead
		}
		c.lastRenew, c.lastRead = renew, read
	}
	var pods []corev1.Pod
	if c.PodSelector != "" && !arcLeaseStatus(c.ref(), lease, now, c.renewedAfter).Active {
		list, err := c.Kube.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: c.PodSelector})
		if err != nil {
			return ARCStatus{}, fmt.Errorf("list ARC's pods in %s (%s): %w", c.Namespace, c.PodSelector, err)
		}
		pods = list.Items
	}
	return arcAlive(c.ref(), lease, c.PodSelector, pods, now, c.renewedAfter), nil
}

// arcAlive is the whole decision from what a check read: the Lease (nil when
// there is none), ARC's pods, the local time, and the local time after which
// this process last saw the Lease renewed (zero: never).
func arcAlive(leaseRef string, lease *coordinationv1.Lease, podSelector string, pods []corev1.Pod, now, renewedAfter time.Time) ARCStatus {
	if s := arcLeaseStatus(leaseRef, lease, now, renewedAfter); s.Active || podSelector == "" {
		return s
	}
	return arcPodsStatus(podSelector, pods)
}

// arcLeaseStatus: the Lease is held while it names a holder and either its
// renewTime plus its duration (plus arcClockSkew) is still ahead of now, or
// this process saw it renewed less than a duration ago. A released Lease
// (controller-runtime empties the holder) or an expired one is not held.
func arcLeaseStatus(ref string, lease *coordinationv1.Lease, now, renewedAfter time.Time) ARCStatus {
	if lease == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return ARCStatus{}
	}
	duration := arcLeaseDurationDefault
	if d := lease.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		duration = time.Duration(*d) * time.Second
	}
	renew := leaseRenewTime(lease)
	byClock := !renew.IsZero() && renew.Add(duration+arcClockSkew).After(now)
	bySight := !renewedAfter.IsZero() && renewedAfter.Add(duration).After(now)
	if !byClock && !bySight {
		return ARCStatus{}
	}
	ago := max(now.Sub(renew), 0).Round(time.Second)
	if bySight && !byClock {
		ago = max(now.Sub(renewedAfter), 0).Round(time.Second)
	}
	return ARCStatus{Active: true, Cause: arcCauseLease, Message: fmt.Sprintf(
		"ARC's controller-manager holds Lease %s (holder %s, renewed %s ago); scale its Deployment to 0 to hand over to arcflow",
		ref, *lease.Spec.HolderIdentity, ago)}
}

// arcPodsStatus: ARC runs while one of its controller pods is Running, which
// is how it runs with leader election off, or between two leaders.
func arcPodsStatus(selector string, pods []corev1.Pod) ARCStatus {
	var running []string
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p.Namespace+"/"+p.Name)
		}
	}
	if len(running) == 0 {
		return ARCStatus{}
	}
	sort.Strings(running)
	return ARCStatus{Active: true, Cause: arcCausePods, Message: fmt.Sprintf(
		"ARC's controller-manager runs in pod %s (%s), with no Lease held; scale its Deployment to 0 to hand over to arcflow",
		strings.Join(running, ", "), selector)}
}

// leaseRenewTime is the Lease's renewTime, or its acquireTime before any renewal.
func leaseRenewTime(lease *coordinationv1.Lease) time.Time {
	switch {
	case lease.Spec.RenewTime != nil:
		return lease.Spec.RenewTime.Time
	case lease.Spec.AcquireTime != nil:
		return lease.Spec.AcquireTime.Time
	}
	return time.Time{}
}

// arcUnknown is the state before any check succeeded: arcflow waits rather
// than risk acting beside a live ARC.
func (c *ARCController) arcUnknown(err error) ARCStatus {
	var hint string
	if apierrors.IsForbidden(err) {
		hint = "; grant the worker get on leases and list on pods there"
	}
	return ARCStatus{Active: true, Cause: arcCauseUnknown, Message: fmt.Sprintf(
		"cannot tell whether ARC's controller-manager runs (%v)%s, or set --arc-controller-lease= to skip the check; arcflow acts once it can tell",
		err, hint)}
}
