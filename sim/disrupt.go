package sim

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// LoseNode does what a node's disappearing does. The Node object goes, and the
// runner processes on it die at once: a busy runner's job fails on GitHub and
// the runner goes offline. Then every pod of the node gets what
// kube-controller-manager's pod GC does to a pod whose node is gone (which the
// test stack does not run): phase Failed with the condition DisruptionTarget
// (reason DeletionByPodGC), and a deletion with grace period 0. The real pod
// GC waits 40 s (its quarantine) before it believes the node is gone; this
// does not.
//
// Pod GC takes every pod of the node, whoever's, so a test should lose a node
// of its own (AddNode), not one other tests schedule to.
func (r *Runners) LoseNode(ctx context.Context, node string) error {
	r.init()
	if err := r.Kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("lose node %s: %w", node, err)
	}
	pods, err := r.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return fmt.Errorf("lose node %s: list its pods: %w", node, err)
	}
	var onNode []*corev1.Pod
	for i := range pods.Items {
		if pod := &pods.Items[i]; pod.Spec.NodeName == node { // also where field selectors are ignored
			onNode = append(onNode, pod)
		}
	}
	for _, pod := range onNode {
		if r.plays(pod) {
			r.die(pod, LossNodeLost)
		}
	}
	var errs []error
	for _, pod := range onNode {
		if err := podGC(ctx, r.Kube, pod); err != nil {
			errs = append(errs, fmt.Errorf("lose node %s: %w", node, err))
		}
	}
	return errors.Join(errs...)
}

// podGC does to a pod of a deleted node what the pod GC's orphan collection
// does: a pod not yet Succeeded or Failed is marked Failed with the
// DisruptionTarget condition, then the pod is deleted with grace period 0, as
// no kubelet is left to finish it.
func podGC(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod) error {
	err := updatePodStatus(ctx, kube, pod.Namespace, pod.Name, func(p *corev1.Pod) bool {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return false
		}
		p.Status.Phase = corev1.PodFailed
		setPodCondition(&p.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
		return true
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("pod gc %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// EvictPod evicts a pod through the policy/v1 Eviction API, as a drain does.
// kube-apiserver (1.36, as in the test stack) adds the condition
// DisruptionTarget (reason EvictionByEvictionAPI) itself before it deletes the
// pod, so this does not. The deletion is graceful, and kwok's pod-delete stage
// then removes the pod at once, with no kubelet to run a grace period: the
// runner dies at once, and a busy one's job fails. A refused eviction (a
// PodDisruptionBudget's 429) leaves the runner alive and is returned.
func (r *Runners) EvictPod(ctx context.Context, namespace, name string) error {
	r.init()
	pod, err := r.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("evict pod %s/%s: %w", namespace, name, err)
	}
	r.expect(pod, LossEvicted)
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := r.Kube.PolicyV1().Evictions(namespace).Evict(ctx, eviction); err != nil {
		r.unexpect(pod)
		return fmt.Errorf("evict pod %s/%s: %w", namespace, name, err)
	}
	if r.plays(pod) {
		r.die(pod, LossEvicted)
	}
	return nil
}

// OOMKill has the kernel kill a pod's runner container for passing its memory
// limit: the container ends with reason OOMKilled and exit code 137, and a
// busy runner's job fails. With restartPolicy Never the kubelet then ends the
// pod Failed, once none of its containers runs: a docker sidecar that still
// runs keeps it Running, and only the runner container's state tells. With
// restartPolicy Always (a StatefulSet's pod) the kubelet restarts the container
// and keeps the kill as its last termination state; the simulated runner does
// not come back.
func (r *Runners) OOMKill(ctx context.Context, namespace, name string) error {
	r.init()
	var killed *corev1.Pod
	err := updatePodStatus(ctx, r.Kube, namespace, name, func(p *corev1.Pod) bool {
		killed = p
		return oomKillRunner(p, metav1.Now())
	})
	switch {
	case err != nil:
		return fmt.Errorf("oom-kill: %w", err)
	case killed == nil || !hasRunnerStatus(killed):
		return fmt.Errorf("oom-kill %s/%s: pod has no runner container status", namespace, name)
	}
	if r.plays(killed) {
		r.die(killed, LossOOMKilled)
	}
	return nil
}

// oomKillRunner changes pod's status as the kubelet does when its runner
// container is OOM-killed. It reports false when there is no runner container.
func oomKillRunner(pod *corev1.Pod, now metav1.Time) bool {
	if !hasRunnerStatus(pod) {
		return false
	}
	running := false
	for i := range pod.Status.ContainerStatuses {
		c := &pod.Status.ContainerStatuses[i]
		if c.Name != "runner" {
			running = running || c.State.Terminated == nil
			continue
		}
		started := pod.CreationTimestamp
		if c.State.Running != nil {
			started = c.State.Running.StartedAt
		}
		killed := &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", StartedAt: started, FinishedAt: now}
		if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
			c.RestartCount++
			c.LastTerminationState = corev1.ContainerState{Terminated: killed}
			c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			continue
		}
		c.State, c.Ready = corev1.ContainerState{Terminated: killed}, false
	}
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return true
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		setPodCondition(&pod.Status, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodFailed"})
	}
	if !running {
		pod.Status.Phase = corev1.PodFailed
	}
	return true
}

func hasRunnerStatus(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == "runner" {
			return true
		}
	}
	return false
}

// updatePodStatus applies change to the pod's latest status, retrying on
// conflict (kwok writes statuses too). change returns false to write nothing.
func updatePodStatus(ctx context.Context, kube kubernetes.Interface, namespace, name string, change func(*corev1.Pod) bool) error {
	pods := kube.CoreV1().Pods(namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil || !change(pod) {
			return err
		}
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update status of pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// setPodCondition sets a condition, keeping its transition time when its
// status does not change, as the kubelet and controllers do.
func setPodCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	now := metav1.Now()
	for i := range status.Conditions {
		if status.Conditions[i].Type != c.Type {
			continue
		}
		c.LastTransitionTime = status.Conditions[i].LastTransitionTime
		if status.Conditions[i].Status != c.Status {
			c.LastTransitionTime = now
		}
		status.Conditions[i] = c
		return
	}
	c.LastTransitionTime = now
	status.Conditions = append(status.Conditions, c)
}
