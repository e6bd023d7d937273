package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/world"
)

const kubernetesModeManifest = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: hooks
spec:
  replicas: 1
  template:
    spec:
      repository: octo-org/app
      labels: [linux, hooks]
      containerMode: kubernetes
      workVolumeClaimTemplate:
        storageClassName: e2e-work
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi
`

// containerMode: kubernetes as ARC runs it: the runner pod has the hooks'
// environment, a work volume from workVolumeClaimTemplate and the pool's
// ServiceAccount, whose Role the RunnerDeployment owns; the job pods and
// Secrets the hooks make for a runner are deleted when the runner ends; the
// account goes with the RunnerDeployment.
func TestKubernetesContainerMode(t *testing.T) {
	parallel(t)
	const ns = "kubernetes-mode"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: 2 * time.Second, Seed: 1,
	})
	// No provisioner runs here: offer volumes of the template's class for the work claims.
	removeVolumes, err := world.OfferVolumes(ctx, w.Kube, "e2e-work", 3)
	t.Cleanup(func() { _ = removeVolumes() })
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := stack.Kubectl(context.Background(), "describe", "-n", ns, "pods,pvc")
			t.Log(out)
		}
	})
	start := time.Now()
	require.NoError(t, w.Apply(ctx, kubernetesModeManifest))
	require.Eventually(t, func() bool { return w.IdleRunners() == 1 }, 60*time.Second, 100*time.Millisecond, "the runner registered")
	t.Logf("registered after %v", time.Since(start))

	pods, err := w.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=hooks"})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	runnerPod := pods.Items[0]
	require.Equal(t, "hooks-container-hooks", runnerPod.Spec.ServiceAccountName)
	require.Len(t, runnerPod.Spec.Containers, 1, "no docker")
	env := map[string]corev1.EnvVar{}
	for _, e := range runnerPod.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	require.Equal(t, "/runner/k8s/index.js", env["ACTIONS_RUNNER_CONTAINER_HOOKS"].Value)
	require.Equal(t, "true", env["ACTIONS_RUNNER_REQUIRE_JOB_CONTAINER"].Value)
	require.Equal(t, "metadata.name", env["ACTIONS_RUNNER_POD_NAME"].ValueFrom.FieldRef.FieldPath)
	claim, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, runnerPod.Name+"-work", metav1.GetOptions{})
	require.NoError(t, err, "the work volume's claim, made from the template")
	require.Equal(t, corev1.ClaimBound, claim.Status.Phase)
	role, err := w.Kube.RbacV1().Roles(ns).Get(ctx, "hooks-container-hooks", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "hooks", role.OwnerReferences[0].Name, "owned by the RunnerDeployment")
	_, err = w.Kube.RbacV1().RoleBindings(ns).Get(ctx, "hooks-container-hooks", metav1.GetOptions{})
	require.NoError(t, err)

	// What the hooks make while the runner runs a job: a job pod and a Secret.
	jobLabels := map[string]string{activities.LabelJobPodOf: runnerPod.Name}
	_, err = w.Kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: runnerPod.Name + "-workflow", Labels: jobLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "job", Image: "node:20"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: runnerPod.Name + "-secret", Labels: jobLabels}}, metav1.CreateOptions{})
	require.NoError(t, err)
	w.Queue("octo-org/app", "build", []string{"self-hosted", "linux", "hooks"})
	gone := func(get func() error) bool { return apierrors.IsNotFound(get()) }
	require.Eventually(t, func() bool {
		return gone(func() error {
			_, err := w.Kube.CoreV1().Pods(ns).Get(ctx, runnerPod.Name+"-workflow", metav1.GetOptions{})
			return err
		}) && gone(func() error {
			_, err := w.Kube.CoreV1().Secrets(ns).Get(ctx, runnerPod.Name+"-secret", metav1.GetOptions{})
			return err
		})
	}, 60*time.Second, 200*time.Millisecond, "the job pod and Secret went with their runner")
	require.Equal(t, "completed", w.GitHub.Jobs()[0].Status)
	t.Logf("job pods gone after %v", time.Since(start))

	out, err := stack.Kubectl(ctx, "delete", "-n", ns, "rdeploy", "hooks")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool {
		return gone(func() error {
			_, err := w.Kube.RbacV1().Roles(ns).Get(ctx, "hooks-container-hooks", metav1.GetOptions{})
			return err
		}) && gone(func() error {
			_, err := w.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "hooks-container-hooks", metav1.GetOptions{})
			return err
		})
	}, 60*time.Second, 200*time.Millisecond, "the ServiceAccount and Role went with the RunnerDeployment")
	t.Logf("account gone after %v", time.Since(start))
}
