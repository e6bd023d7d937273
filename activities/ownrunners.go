package activities

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/github"
)

// OwnRunners lists the runners arcflow made for a pool that are still in the
// cluster: a RunnerDeployment's pods, a RunnerSet's StatefulSets with their
// pods, and runner Secrets no pod or StatefulSet owns yet (a runner whose
// workflow stopped between its Secret and its pod). A pool starting with no
// history takes them over (issue 35: Temporal's store lost, or the pool's
// workflow terminated), so they count as its capacity and each ends as any
// runner does. A JIT runner's GitHub ID comes from its Secret.
func (k *Kubernetes) OwnRunners(ctx context.Context, in ARCRunnersInput) ([]ARCRunner, error) {
	byName := map[string]*ARCRunner{}
	selector := LabelPool + "=" + in.Name
	if in.Kind == v1alpha1.KindRunnerSet {
		sets, err := k.Client.AppsV1().StatefulSets(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector + "," + LabelRunnerSet + "=" + in.Name})
		if err != nil {
			return nil, fmt.Errorf("list runner StatefulSets of %s/%s: %w", in.Namespace, in.Name, err)
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
			return nil, fmt.Errorf("list runner pods of %s/%s: %w", in.Namespace, in.Name, err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			byName[pod.Name] = &ARCRunner{Name: pod.Name, Own: true, TemplateHash: pod.Labels[LabelTemplateHash], Pod: PodStateOf(pod)}
		}
	}
	secrets, err := k.Client.CoreV1().Secrets(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list runner secrets of %s/%s: %w", in.Namespace, in.Name, err)
	}
	for _, secret := range secrets.Items {
		name, ok := runnerOfSecret(secret.Name)
		if !ok {
			continue
		}
		r := byName[name]
		if r == nil {
			if len(secret.OwnerReferences) > 0 {
				continue // its pod or StatefulSet is gone, and the garbage collector takes it
			}
			r = &ARCRunner{Name: name, Own: true} // no pod: Exited, so its workflow cleans up at once
			byName[name] = r
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

// runnerOfSecret is the runner a Secret named by TokenSecretName belongs to.
func runnerOfSecret(secretName string) (string, bool) {
	const suffix = "-registration-token"
	if len(secretName) <= len(suffix) || secretName[len(secretName)-len(suffix):] != suffix {
		return "", false
	}
	return secretName[:len(secretName)-len(suffix)], true
}

// RunnerIDs is GitHub's ID of each named runner its scope lists, read from
// the shared (cached) list of the scope's runners: a pool that takes over
// runners it made learns which registered without a call per runner.
func (g *GitHub) RunnerIDs(ctx context.Context, in RunnerBusyInput) (map[string]int64, error) {
	listed, err := g.listedRunners(github.WithPurpose(ctx, "takeover"), in)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]int64, len(listed))
	for name, r := range listed {
		ids[name] = r.ID
	}
	return ids, nil
}
