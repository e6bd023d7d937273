package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func env(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

func container(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func input(config v1alpha1.RunnerConfig) RunnerPodInput {
	return RunnerPodInput{
		Namespace: "ci", Name: "app-x1", Pool: "app", Kind: v1alpha1.KindRunnerDeployment, TemplateHash: "abc",
		Spec: v1alpha1.RunnerSpec{RunnerConfig: config}, GitHubURL: "https://github.com/",
		Owner: &metav1.OwnerReference{APIVersion: "actions.summerwind.dev/v1alpha1", Kind: "RunnerDeployment", Name: "app", UID: "u1"},
	}
}

func TestRunnerPodWithDockerSidecar(t *testing.T) {
	in := input(v1alpha1.RunnerConfig{Organization: "octo", Labels: []string{"linux", "gpu"}, Group: "builders", DockerMTU: ptr.To[int64](1400)})
	pod := BuildRunnerPod(in, PodDefaults{RunnerImage: "runner:1", DockerImage: "docker:dind", DockerGID: "1001", CommonLabels: []string{"common"}})

	require.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
	require.Equal(t, "RunnerDeployment", pod.OwnerReferences[0].Kind)
	require.Equal(t, map[string]string{LabelRunner: "", LabelPool: "app", LabelTemplateHash: "abc", LabelRunnerDeployment: "app"}, pod.Labels)

	runner := container(pod, "runner")
	require.Equal(t, "runner:1", runner.Image)
	require.Equal(t, corev1.PullAlways, runner.ImagePullPolicy)
	e := env(*runner)
	for name, want := range map[string]string{
		"RUNNER_ORG": "octo", "RUNNER_REPO": "", "RUNNER_ENTERPRISE": "", "RUNNER_LABELS": "linux,gpu,common",
		"RUNNER_GROUP": "builders", "DOCKER_ENABLED": "true", "DOCKERD_IN_RUNNER": "false", "GITHUB_URL": "https://github.com/",
		"RUNNER_WORKDIR": "/runner/_work", "RUNNER_EPHEMERAL": "true", "RUNNER_NAME": "app-x1", "DOCKER_HOST": "unix:///run/docker.sock",
	} {
		require.Contains(t, e, name)
		require.Equal(t, want, e[name].Value, name)
	}
	require.Equal(t, PoolTokenSecretName(in), e["RUNNER_TOKEN"].ValueFrom.SecretKeyRef.Name, "the token comes from the pool's Secret")
	require.Empty(t, e["RUNNER_TOKEN"].Value)

	docker := container(pod, "docker")
	require.NotNil(t, docker)
	require.True(t, *docker.SecurityContext.Privileged)
	require.Contains(t, docker.Args, "--mtu=1400")
	require.Nil(t, runner.SecurityContext, "the runner is not privileged in sidecar mode")

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	require.Equal(t, corev1.StorageMediumMemory, volumes["var-run"].EmptyDir.Medium)
	require.Equal(t, "1M", volumes["var-run"].EmptyDir.SizeLimit.String())
	require.Contains(t, volumes, "runner")
	require.Contains(t, volumes, "work")
}

func TestRunnerPodDindInRunnerAndNoDocker(t *testing.T) {
	dind := BuildRunnerPod(input(v1alpha1.RunnerConfig{Repository: "o/r", DockerdWithinRunnerContainer: ptr.To(true), DockerMTU: ptr.To[int64](1300), DockerRegistryMirror: ptr.To("https://m/")}), DefaultPodDefaults())
	require.Len(t, dind.Spec.Containers, 1)
	runner := container(dind, "runner")
	require.True(t, *runner.SecurityContext.Privileged)
	e := env(*runner)
	require.Equal(t, "1300", e["MTU"].Value)
	require.Equal(t, "https://m/", e["DOCKER_REGISTRY_MIRROR"].Value)
	require.Equal(t, "true", e["DOCKERD_IN_RUNNER"].Value)

	none := BuildRunnerPod(input(v1alpha1.RunnerConfig{Repository: "o/r", DockerEnabled: ptr.To(false), Ephemeral: ptr.To(false)}), DefaultPodDefaults())
	require.Len(t, none.Spec.Containers, 1)
	require.Equal(t, "false", env(none.Spec.Containers[0])["DOCKER_ENABLED"].Value)
	require.Equal(t, "false", env(none.Spec.Containers[0])["RUNNER_EPHEMERAL"].Value)
	require.NotContains(t, env(none.Spec.Containers[0]), "DOCKER_HOST")
}

func TestUserContainersGetRunnerDefaults(t *testing.T) {
	in := input(v1alpha1.RunnerConfig{Repository: "o/r"})
	in.Spec.Containers = []corev1.Container{{Name: "runner", Env: []corev1.EnvVar{{Name: "RUNNER_LABELS", Value: "mine"}}}, {Name: "sidecar", Image: "busybox"}}
	pod := BuildRunnerPod(in, DefaultPodDefaults())
	runner := container(pod, "runner")
	require.Equal(t, "summerwind/actions-runner:latest", runner.Image)
	require.Equal(t, "mine", env(*runner)["RUNNER_LABELS"].Value, "user env wins")
	require.Contains(t, env(*runner), "RUNNER_NAME")
	require.NotNil(t, container(pod, "sidecar"))
}

func TestRunnerStatefulSet(t *testing.T) {
	rs := v1alpha1.RunnerSetSpec{
		RunnerConfig: v1alpha1.RunnerConfig{Organization: "octo"},
		StatefulSetSpec: appsv1.StatefulSetSpec{
			ServiceName: "svc",
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "rs"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "runner"}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}},
		},
	}
	in := RunnerPodInput{Namespace: "ci", Name: "rs-abcde-0", Pool: "rs", Kind: v1alpha1.KindRunnerSet, Spec: RunnerSetPodSpec(&rs), StatefulSet: &rs.StatefulSetSpec}
	sts := BuildRunnerStatefulSet(in, DefaultPodDefaults())
	require.Equal(t, "rs-abcde", sts.Name)
	require.Equal(t, int32(1), *sts.Spec.Replicas)
	require.Equal(t, "svc", sts.Spec.ServiceName)
	require.Equal(t, "cache", sts.Spec.VolumeClaimTemplates[0].Name)
	require.Equal(t, appsv1.DeletePersistentVolumeClaimRetentionPolicyType, sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted)
	tpl := sts.Spec.Template
	require.Equal(t, corev1.RestartPolicyAlways, tpl.Spec.RestartPolicy)
	require.Equal(t, "rs", tpl.Labels["app"])
	require.Equal(t, "rs", tpl.Labels[LabelRunnerSet])
	require.Equal(t, "rs-abcde", sts.Spec.Selector.MatchLabels[LabelRunnerStatefulSet])
	require.Equal(t, "rs-abcde-0", env(tpl.Spec.Containers[0])["RUNNER_NAME"].Value, "the runner is named after its pod")
}

func TestPodStateOfARestartedRunnerContainer(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "runner", RestartCount: 1,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}},
	}}}}
	require.Equal(t, corev1.PodSucceeded, PodStateOf(pod).Phase)
	require.True(t, PodStateOf(pod).Exited())
	require.True(t, PodStateOf(nil).Exited())
}

func TestPodStateOfAnUnschedulablePod(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable},
	}}}
	require.True(t, PodStateOf(pod).Unschedulable)
	pod.Status.Conditions[0].Reason = "SchedulingGated" // waiting on purpose, not stuck
	require.False(t, PodStateOf(pod).Unschedulable)
	pod.Status.Conditions[0] = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	require.False(t, PodStateOf(pod).Unschedulable)
}
