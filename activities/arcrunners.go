package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// What ARC's legacy controllers put on the objects they leave behind, and that
// arcflow takes over (docs/migrating-from-arc.md).
const (
	// ARCRunnerFinalizer is on ARC's Runner objects.
	ARCRunnerFinalizer = "runner.actions.summerwind.dev"
	// ARCPodFinalizer and ARCLinkedResourcesFinalizer are on ARC's runner pods.
	ARCPodFinalizer             = "actions.summerwind.dev/runner-pod"
	ARCLinkedResourcesFinalizer = "actions.summerwind.dev/linked-resources"
	// ARCRunnerIDAnnotation is the GitHub runner ID ARC found for a pod.
	ARCRunnerIDAnnotation = "actions-runner/id"
)

// ARC's per-runner objects, which arcflow's own CRDs do not define: a cluster
// that never ran ARC has no such resource, and nothing is adopted there.
var (
	ARCRunnerResource           = v1alpha1.GroupVersion.WithResource("runners")
	ARCRunnerReplicaSetResource = v1alpha1.GroupVersion.WithResource("runnerreplicasets")
)

// ARCRunners lists the Runner objects ARC's RunnerReplicaSets made for a
// RunnerDeployment, with their pods. Runners whose pod is gone are listed
// too, so their objects are cleaned up. RunnerSets' StatefulSets are not
// adopted yet.
func (k *Kubernetes) ARCRunners(ctx context.Context, in ARCRunnersInput) ([]ARCRunner, error) {
	if in.Kind != v1alpha1.KindRunnerDeployment || k.Dynamic == nil {
		return nil, nil
	}
	list, err := k.Dynamic.Resource(ARCRunnerResource).Namespace(in.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: LabelRunnerDeployment + "=" + in.Name,
	})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil // ARC's CRDs are not installed: nothing of ARC's to adopt
	case apierrors.IsForbidden(err):
		// An RBAC without the takeover rules: say so at once rather than
		// retrying, so the pool's first decision does not wait.
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("list ARC runners of %s/%s: %v (the worker's RBAC needs get/list/patch/delete on runners and runnerreplicasets.actions.summerwind.dev)", in.Namespace, in.Name, err),
			ErrTypeForbidden, nil)
	case err != nil:
		return nil, fmt.Errorf("list ARC runners of %s/%s: %w", in.Namespace, in.Name, err)
	}
	var out []ARCRunner
	for _, item := range list.Items {
		ephemeral, found, _ := unstructured.NestedBool(item.Object, "spec", "ephemeral")
		r := ARCRunner{Name: item.GetName(), Ephemeral: ephemeral || !found}
		pod, err := k.Client.CoreV1().Pods(in.Namespace).Get(ctx, item.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("get ARC runner pod %s/%s: %w", in.Namespace, item.GetName(), err)
		default:
			r.Pod = PodStateOf(pod)
			r.RunnerID, _ = strconv.ParseInt(pod.Annotations[ARCRunnerIDAnnotation], 10, 64)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// releaseARCRunner removes what ARC left of a runner arcflow adopted, once it
// is unregistered or gone from GitHub: its pod's finalizers, its pod, its
// Runner's finalizer and the Runner, and the RunnerReplicaSet that owned it
// when it has no Runner left. Each step is idempotent.
func (k *Kubernetes) releaseARCRunner(ctx context.Context, ref PodRef) error {
	pods := k.Client.CoreV1().Pods(ref.Namespace)
	if pod, err := pods.Get(ctx, ref.Name, metav1.GetOptions{}); err == nil && (ref.UID == "" || string(pod.UID) == ref.UID) {
		if err := dropFinalizers(pod.Finalizers, func(patch []byte) error {
			_, err := pods.Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
			return err
		}, ARCPodFinalizer, ARCLinkedResourcesFinalizer); err != nil {
			return fmt.Errorf("release ARC runner pod %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	} else if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get ARC runner pod %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if err := k.deletePodAndSecret(ctx, ref); err != nil {
		return err
	}
	if k.Dynamic == nil {
		return nil
	}
	runners := k.Dynamic.Resource(ARCRunnerResource).Namespace(ref.Namespace)
	runner, err := runners.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil
	case err != nil:
		return fmt.Errorf("get ARC runner %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if err := dropFinalizers(runner.GetFinalizers(), func(patch []byte) error {
		_, err := runners.Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	}, ARCRunnerFinalizer); err != nil {
		return fmt.Errorf("release ARC runner %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if err := runners.Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ARC runner %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return k.deleteEmptyARCReplicaSets(ctx, ref.Namespace, runner.GetOwnerReferences())
}

// dropFinalizers removes the named finalizers with a JSON patch that tests the
// list it read, so a concurrent change makes it fail and retry, not clobber.
func dropFinalizers(have []string, patch func([]byte) error, drop ...string) error {
	var kept []string
	for _, f := range have {
		keep := true
		for _, d := range drop {
			keep = keep && f != d
		}
		if keep {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(have) {
		return nil
	}
	if kept == nil {
		kept = []string{}
	}
	ops, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": have},
		{"op": "replace", "path": "/metadata/finalizers", "value": kept},
	})
	if err != nil {
		return err
	}
	if err := patch(ops); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizers %v: %w", drop, err)
	}
	return nil
}

// deleteEmptyARCReplicaSets deletes the RunnerReplicaSets among owners that
// own no Runner any more.
func (k *Kubernetes) deleteEmptyARCReplicaSets(ctx context.Context, namespace string, owners []metav1.OwnerReference) error {
	sets := k.Dynamic.Resource(ARCRunnerReplicaSetResource).Namespace(namespace)
	for _, owner := range owners {
		if owner.Kind != "RunnerReplicaSet" {
			continue
		}
		left, err := k.Dynamic.Resource(ARCRunnerResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list ARC runners of %s/%s: %w", namespace, owner.Name, err)
		}
		owned := false
		for _, r := range left.Items {
			for _, o := range r.GetOwnerReferences() {
				owned = owned || (o.UID == owner.UID && r.GetDeletionTimestamp() == nil)
			}
		}
		if owned {
			continue
		}
		uid := owner.UID
		err = sets.Delete(ctx, owner.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete ARC runner replica set %s/%s: %w", namespace, owner.Name, err)
		}
	}
	return nil
}
