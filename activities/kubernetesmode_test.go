package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func kubernetesModeInput() RunnerPodInput {
	in := input(v1alpha1.RunnerConfig{Repository: "o/r", ContainerMode: "kubernetes"})
	in.Spec.WorkVolumeClaimTemplate = &v1alpha1.WorkVolumeClaimTemplate{
		StorageClassName: "fast", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
	}
	return in
}

// The pod of ARC's kubernetes container mode: the hooks' environment, no
// docker, a generic ephemeral work volume from workVolumeClaimTemplate, and the
// pool's ServiceAccount.
func TestKubernetesModeRunnerPod(t *testing.T) {
	pod := BuildRunnerPod(kubernetesModeInput(), DefaultPodDefaults())
	require.Len(t, pod.Spec.Containers, 1, "no docker sidecar")
	runner := container(pod, "runner")
	e := env(*runner)
	for name, want := range map[string]string{
		"ACTIONS_RUNNER_CONTAINER_HOOKS": "/runner/k8s/index.js", "ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER": "true",
		"ACTIONS_RUNNER_REQUIRE_SAME_NODE": "true", "DOCKER_ENABLED": "false", "DOCKERD_IN_RUNNER": "false",
	} {
		require.Equal(t, want, e[name].Value, name)
	}
	require.Equal(t, "metadata.name", e["ACTIONS_RUNNER_POD_NAME"].ValueFrom.FieldRef.FieldPath)
	require.Equal(t, "metadata.namespace", e["ACTIONS_RUNNER_JOB_NAMESPACE"].ValueFrom.FieldRef.FieldPath)
	require.NotContains(t, e, "DOCKER_HOST")
	require.Nil(t, runner.SecurityContext, "not privileged")
	require.Equal(t, "app-container-hooks", pod.Spec.ServiceAccountName)

	var work *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == "work" {
			work = &pod.Spec.Volumes[i]
		}
	}
	require.NotNil(t, work.Ephemeral, "a generic ephemeral volume, created and deleted with the pod")
	claim := work.Ephemeral.VolumeClaimTemplate.Spec
	require.Equal(t, "fast", *claim.StorageClassName)
	require.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, claim.AccessModes)
	require.Equal(t, "10Gi", claim.Resources.Requests.Storage().String())

	rwx := kubernetesModeInput()
	rwx.Spec.WorkVolumeClaimTemplate.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	rwx.Spec.ServiceAccountName = "mine"
	pod = BuildRunnerPod(rwx, DefaultPodDefaults())
	require.NotContains(t, env(*container(pod, "runner")), "ACTIONS_RUNNER_REQUIRE_SAME_NODE", "job pods may run on any node")
	require.Equal(t, "mine", pod.Spec.ServiceAccountName, "a named ServiceAccount is used as it is")
}

// The pool's ServiceAccount, Role and RoleBinding are made once, owned by the
// pool's resource; a runner's end deletes the job pods and Secrets the hooks
// made for it, and nothing of another runner.
func TestKubernetesModeAccountAndJobPodCleanup(t *testing.T) {
	jobPod := func(name, runner string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: name, Labels: map[string]string{LabelJobPodOf: runner}}}
	}
	kube := k8sfake.NewClientset(jobPod("app-x1-workflow", "app-x1"), jobPod("app-x2-workflow", "app-x2"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "app-x1-secret", Labels: map[string]string{LabelJobPodOf: "app-x1"}}})
	k := &Kubernetes{Client: kube}
	ctx := context.Background()
	in := kubernetesModeInput()

	require.NoError(t, k.ensureKubernetesModeAccount(ctx, in))
	sa, err := kube.CoreV1().ServiceAccounts("ci").Get(ctx, "app-container-hooks", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "RunnerDeployment", sa.OwnerReferences[0].Kind, "deleted with the pool")
	role, err := kube.RbacV1().Roles("ci").Get(ctx, "app-container-hooks", metav1.GetOptions{})
	require.NoError(t, err)
	granted := map[string][]string{}
	for _, r := range role.Rules {
		granted[r.Resources[0]] = r.Verbs
	}
	for _, resource := range []string{"pods", "pods/exec", "pods/log", "jobs", "secrets"} {
		require.NotEmpty(t, granted[resource], resource)
	}
	binding, err := kube.RbacV1().RoleBindings("ci").Get(ctx, "app-container-hooks", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "app-container-hooks", binding.Subjects[0].Name)
	calls := len(kube.Actions())
	require.NoError(t, k.ensureKubernetesModeAccount(ctx, in))
	require.Len(t, kube.Actions(), calls, "the pool's next runners cost no call for it")

	require.NoError(t, k.DeleteRunnerPod(ctx, PodRef{Namespace: "ci", Name: "app-x1", JobPods: true}))
	pods, err := kube.CoreV1().Pods("ci").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	require.Equal(t, "app-x2-workflow", pods.Items[0].Name, "another runner's job pod stays")
	_, err = kube.CoreV1().Secrets("ci").Get(ctx, "app-x1-secret", metav1.GetOptions{})
	require.Error(t, err, "the hooks' Secret of the runner is gone")
}
