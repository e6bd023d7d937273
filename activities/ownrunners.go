package activities

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// OwnRunners lists the runners arcflow made for a pool that are still in the
// cluster: a RunnerDeployment's pods, and a RunnerSet's StatefulSets with
// their pods. A pool starting with no history takes them over (issue 35:
// Temporal's store lost, or the pool's workflow terminated), so they count as
// its capacity and each ends as any runner does. A JIT runner's GitHub ID
// comes from its Secret. A refusal of the worker's RBAC is said at once, not
// retried, so the pool's first decision does not wait on it.
func (k *Kubernetes) OwnRunners(ctx context.Context, in ARCRunnersInput) ([]ARCRunner, error) {
	byName := map[string]*ARCRunner{}
	selector := LabelPool + "=" + in.Name
	if in.Kind == v1alpha1.KindRunnerSet {
		sets, err := k.Client.AppsV1().StatefulSets(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector + "," + LabelRunnerSet + "=" + in.Name})
		if err != nil {
			return nil, kubeReadError(fmt.Sprintf("list runner StatefulSets of %s/%s", in.Namespace, in.Name), err)
		}
		for _, set := range sets.Items {
			name := set.Name + "-0" // the runner is the StatefulSet's only pod (StatefulSetName)
			r := &ARCRunner{Name: name, Own: true, TemplateHash: set.Spec.Template.Labels[LabelTemplateHash]}
			pod, err := k.Client.CoreV1().Pods(in.Namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				// Not created yet, or replaced: the StatefulSet counts as a runner
				// starting, which its registration timeout bounds.
				r.Pod = PodState{Exists: true, Phase: corev1.PodPending}
			case err != nil:
				return nil, fmt.Errorf("get runner pod %s/%s: %w", in.Namespace, name, err)
			default:
				r.Pod = PodStateOf(pod)
			}
			byName[name] = r
		}
	} else {
		pods, err := k.Client.CoreV1().Pods(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector + "," + LabelRunnerDeployment + "=" + in.Name})
		if err != nil {
			return nil, kubeReadError(fmt.Sprintf("list runner pods of %s/%s", in.Namespace, in.Name), err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			byName[pod.Name] = &ARCRunner{Name: pod.Name, Own: true, TemplateHash: pod.Labels[LabelTemplateHash], Pod: PodStateOf(pod)}
		}
	}
	for name, r := range byName {
		// One get per runner: the worker may get runner Secrets but not list
		// them (a list would hand it every Secret's data in the namespace).
		secret, err := k.Client.CoreV1().Secrets(in.Namespace).Get(ctx, TokenSecretName(name), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, kubeReadError(fmt.Sprintf("get runner secret %s/%s", in.Namespace, TokenSecretName(name)), err)
		}
		if _, jit := secret.Data[JITConfigSecretKey]; jit {
			r.JIT = true
			r.RunnerID, _ = strconv.ParseInt(secret.Annotations[AnnotationRunnerID], 10, 64)
		}
	}
	out := make([]ARCRunner, 0, len(byName))
	for _, r := range byName {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// kubeReadError wraps a failed read; Forbidden is not retried.
func kubeReadError(what string, err error) error {
	if apierrors.IsForbidden(err) {
		return temporal.NewNonRetryableApplicationError(what+": "+err.Error(), ErrTypeForbidden, nil)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// RunnerIDs is GitHub's ID of each named runner its scope lists, read from
// the shared (cached) list of the scope's runners: a pool that takes over
// runners it made learns which registered without a call per runner.
func (g *GitHub) RunnerIDs(ctx context.Context, in RunnerBusyInput) (map[string]int64, error) {
	listed, err := g.listedRunners(ctx, in, "takeover")
	if err != nil {
		return nil, err
	}
	ids := make(map[string]int64, len(listed))
	for name, r := range listed {
		ids[name] = r.ID
	}
	return ids, nil
}
