package activities

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// Kubernetes container mode (ARC's containerMode: kubernetes): the runner runs
// each job's containers as pods of their own through the runner container
// hooks, so it needs no docker, a work volume those pods share, and a
// ServiceAccount that may manage pods in its namespace. arcflow gives every
// pool in this mode one ServiceAccount, Role and RoleBinding, owned by the
// RunnerDeployment or RunnerSet and so deleted with it, and deletes the job pods
// and Secrets the hooks made when their runner ends.

const (
	containerModeKubernetes = "kubernetes"
	// containerHooksPath is the hooks' entry point in ARC's runner images.
	containerHooksPath = "/runner/k8s/index.js"
	// gitHubContainerHooksPath is theirs in GitHub's image (ARC's scale-set chart's).
	gitHubContainerHooksPath = gitHubRunnerHome + "/k8s/index.js"
	// LabelJobPodOf is the label the hooks put on the job pods and Secrets they
	// create: the runner pod's name.
	LabelJobPodOf = "runner-pod"
)

func kubernetesMode(spec v1alpha1.RunnerSpec) bool {
	return spec.ContainerMode == containerModeKubernetes
}

// KubernetesModeAccount is the ServiceAccount, Role and RoleBinding of a pool's
// runners in kubernetes mode, unless the spec names a ServiceAccount.
func KubernetesModeAccount(pool string) string { return pool + "-container-hooks" }

// kubernetesModeRules are what ARC grants a kubernetes-mode runner.
var kubernetesModeRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
	{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "create", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "delete"}},
}

// kubernetesModeEnv is what the hooks read.
func kubernetesModeEnv(spec v1alpha1.RunnerSpec, image string) []corev1.EnvVar {
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	env := []corev1.EnvVar{
		{Name: "ACTIONS_RUNNER_CONTAINER_HOOKS", Value: containerHooks(image)},
		{Name: "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER", Value: "true"},
		field("ACTIONS_RUNNER_POD_NAME", "metadata.name"),
		field("ACTIONS_RUNNER_JOB_NAMESPACE", "metadata.namespace"),
	}
	if t := spec.WorkVolumeClaimTemplate; t != nil && slices.Contains(t.AccessModes, corev1.ReadWriteOnce) {
		// A volume one node mounts: the job pods must run beside the runner.
		env = append(env, corev1.EnvVar{Name: "ACTIONS_RUNNER_REQUIRE_SAME_NODE", Value: "true"})
	}
	return env
}

// workVolume is the work directory the runner and its job pods share: a
// generic ephemeral volume, created and deleted with the pod.
func workVolume(t *v1alpha1.WorkVolumeClaimTemplate) corev1.Volume {
	claim := corev1.PersistentVolumeClaimSpec{AccessModes: t.AccessModes, Resources: t.Resources}
	if t.StorageClassName != "" {
		claim.StorageClassName = &t.StorageClassName
	}
	return corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claim},
	}}}
}

// kubernetesModeAccounts remembers the pools whose account this process has
// made, so a pool's runners after the first cost no API call for it.
type kubernetesModeAccounts struct{ made sync.Map }

// ensureKubernetesModeAccount makes the pool's ServiceAccount, Role and
// RoleBinding, owned by the pool's resource. Existing ones are left as they are.
func (k *Kubernetes) ensureKubernetesModeAccount(ctx context.Context, in RunnerPodInput) error {
	if !kubernetesMode(in.Spec) || in.Spec.ServiceAccountName != "" {
		return nil
	}
	key := in.Namespace + "/" + in.Pool
	if in.Owner != nil {
		key += "/" + string(in.Owner.UID)
	}
	if _, done := k.accounts.made.Load(key); done {
		return nil
	}
	name := KubernetesModeAccount(in.Pool)
	meta := metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Labels: map[string]string{LabelPool: in.Pool},
		OwnerReferences: deletedWithPool(in.Owner)}
	creates := []struct {
		what   string
		create func() error
	}{
		{"serviceaccount", func() error {
			_, err := k.Client.CoreV1().ServiceAccounts(in.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
			return err
		}},
		{"role", func() error {
			_, err := k.Client.RbacV1().Roles(in.Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: kubernetesModeRules}, metav1.CreateOptions{})
			return err
		}},
		{"rolebinding", func() error {
			_, err := k.Client.RbacV1().RoleBindings(in.Namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta,
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: in.Namespace}},
			}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, c := range creates {
		if err := c.create(); err != nil && !apierrors.IsAlreadyExists(err) {
			if apierrors.IsForbidden(err) {
				return invalidSpec(c.what+" for containerMode kubernetes (grant the worker the kubernetes-mode RBAC)", in, err)
			}
			return fmt.Errorf("create %s %s/%s: %w", c.what, in.Namespace, name, err)
		}
	}
	k.accounts.made.Store(key, true)
	return nil
}

// deleteJobPods deletes what the hooks made for a runner pod that is gone: a
// runner has one or two job pods, so a list and a delete each.
func (k *Kubernetes) deleteJobPods(ctx context.Context, ref PodRef) error {
	selector := metav1.ListOptions{LabelSelector: LabelJobPodOf + "=" + ref.Name}
	pods, err := k.Client.CoreV1().Pods(ref.Namespace).List(ctx, selector)
	if err != nil {
		return fmt.Errorf("list job pods of %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	for _, p := range pods.Items {
		if err := k.Client.CoreV1().Pods(ref.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete job pod %s/%s: %w", ref.Namespace, p.Name, err)
		}
	}
	secrets, err := k.Client.CoreV1().Secrets(ref.Namespace).List(ctx, selector)
	if err != nil {
		return fmt.Errorf("list job secrets of %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	for _, s := range secrets.Items {
		if err := k.Client.CoreV1().Secrets(ref.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete job secret %s/%s: %w", ref.Namespace, s.Name, err)
		}
	}
	return nil
}

// containerHooks is the container hooks' entry point in the runner image.
func containerHooks(image string) string {
	if RunnerImageKindOf(image) == GitHubRunnerImage {
		return gitHubContainerHooksPath
	}
	return containerHooksPath
}
