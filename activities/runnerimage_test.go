package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func TestRunnerImageKindOf(t *testing.T) {
	for image, want := range map[string]RunnerImageKind{
		"summerwind/actions-runner":                                   SummerwindRunnerImage,
		"summerwind/actions-runner:latest":                            SummerwindRunnerImage,
		"docker.io/summerwind/actions-runner:v2.311.0-ubuntu-22.04":   SummerwindRunnerImage,
		"localhost:5000/mirror/summerwind/actions-runner-dind:latest": SummerwindRunnerImage,
		"summerwind/actions-runner-dind-rootless@sha256:0123":         SummerwindRunnerImage,
		"ghcr.io/actions/actions-runner:latest":                       GitHubRunnerImage,
		"ghcr.io/actions/actions-runner":                              GitHubRunnerImage,
		"registry.example.com/actions/actions-runner:2.325.0":         GitHubRunnerImage,
		"ghcr.io/actions/actions-runner-controller:0.12.1":            OtherRunnerImage,
		"summerwind/actions-runner-controller:v0.27.6":                OtherRunnerImage,
		"example.com/ci/actions-runner:1":                             OtherRunnerImage,
		"actions-runner":                                              OtherRunnerImage,
		"runner":                                                      OtherRunnerImage,
		"":                                                            OtherRunnerImage,
	} {
		require.Equal(t, want, RunnerImageKindOf(image), image)
	}
}

// A well-known image left to its own entrypoint cannot start a JIT runner;
// a command or args, an empty image (arcflow's default) or an image arcflow
// does not know are not judged.
func TestJITImageProblem(t *testing.T) {
	reason, message := JITImageProblem(corev1.Container{Image: "summerwind/actions-runner:latest"})
	require.Equal(t, "TokenOnlyImage", reason)
	require.Contains(t, message, "summerwind/actions-runner:latest")
	require.Contains(t, message, `set image ghcr.io/actions/actions-runner:latest with command: ["/home/runner/run.sh"] on the runner container`)
	require.Contains(t, message, "leave image empty")

	reason, message = JITImageProblem(corev1.Container{Image: "ghcr.io/actions/actions-runner:2.325.0"})
	require.Equal(t, "NoCommand", reason)
	require.Contains(t, message, "no entrypoint")
	require.Contains(t, message, `set command: ["/home/runner/run.sh"] on the runner container, or leave image empty`)

	for _, fine := range []corev1.Container{
		{Image: "ghcr.io/actions/actions-runner:latest", Command: []string{JITRunnerCommand}},
		{Image: "ghcr.io/actions/actions-runner:latest", Args: []string{JITRunnerCommand}},
		{Image: "summerwind/actions-runner:latest", Command: []string{"/runnertmp/run.sh"}},
		{Image: ""},
		{Image: "example.com/ci/runner:1"},
	} {
		reason, _ := JITImageProblem(fine)
		require.Empty(t, reason, "%+v", fine)
	}
}

// A JIT pool that names no image gets GitHub's image and run.sh; one that
// names an image or a command keeps it; token pools keep --runner-image.
func TestJITRunnerDefaultImage(t *testing.T) {
	defaults := DefaultPodDefaults()
	runner := func(in RunnerPodInput, d PodDefaults) *corev1.Container {
		return container(BuildRunnerPod(in, d), "runner")
	}

	c := runner(jitInput(), defaults)
	require.Equal(t, DefaultJITRunnerImage, c.Image)
	require.Equal(t, []string{JITRunnerCommand}, c.Command)
	docker := container(BuildRunnerPod(jitInput(), defaults), "docker")
	require.Equal(t, "123", env(*docker)["DOCKER_GROUP_GID"].Value, "the docker group of GitHub's image")
	require.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: "/home/runner/_work"},
		"where a JIT configuration's _work is under GitHub's image")
	require.Contains(t, docker.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: "/home/runner/_work"}, "the sidecar sees the workspace")
	require.Equal(t, "/home/runner/_work", env(*c)["RUNNER_WORKDIR"].Value)

	k8s := jitInput()
	k8s.Spec.ContainerMode = "kubernetes"
	k8s.Spec.WorkDir = "/work"
	c = runner(k8s, defaults)
	require.Equal(t, "/home/runner/k8s/index.js", env(*c)["ACTIONS_RUNNER_CONTAINER_HOOKS"].Value, "GitHub's image's hooks")
	require.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: "/work"}, "a workDir of the template's own stays")

	token := jitInput()
	token.JIT = false
	c = runner(token, defaults)
	require.Equal(t, "summerwind/actions-runner:latest", c.Image)
	require.Empty(t, c.Command)
	require.Equal(t, "1001", env(*container(BuildRunnerPod(token, defaults), "docker"))["DOCKER_GROUP_GID"].Value)
	require.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "work", MountPath: "/runner/_work"})

	named := jitInput()
	named.Spec.Image = "example.com/ci/runner:1"
	c = runner(named, defaults)
	require.Equal(t, "example.com/ci/runner:1", c.Image)
	require.Empty(t, c.Command, "the image's own entrypoint")

	own := jitInput()
	own.Spec.Containers = []corev1.Container{{Name: "runner", Command: []string{"/home/runner/wrapper.sh"}}}
	c = runner(own, defaults)
	require.Equal(t, DefaultJITRunnerImage, c.Image)
	require.Equal(t, []string{"/home/runner/wrapper.sh"}, c.Command, "the user's command stays")

	bare := jitInput()
	bare.Spec.Containers = []corev1.Container{{Name: "runner", Args: []string{"--once"}}}
	c = runner(bare, defaults)
	require.Equal(t, DefaultJITRunnerImage, c.Image)
	require.Equal(t, []string{JITRunnerCommand}, c.Command)
	require.Equal(t, []string{"--once"}, c.Args, "args go to run.sh")

	imaged := jitInput()
	imaged.Spec.Containers = []corev1.Container{{Name: "runner", Image: "ghcr.io/actions/actions-runner:2.325.0"}}
	c = runner(imaged, defaults)
	require.Equal(t, "ghcr.io/actions/actions-runner:2.325.0", c.Image)
	require.Empty(t, c.Command, "an image the user named is left as given (RunnerImageUnfit says why it cannot start)")

	set := RunnerPodInput{Namespace: "ci", Name: "set-x1", Pool: "set", Kind: v1alpha1.KindRunnerSet, JIT: true,
		Spec: RunnerSetPodSpec(&v1alpha1.RunnerSetSpec{})}
	set.Spec.Containers = []corev1.Container{{Name: "runner"}}
	c = runner(set, defaults)
	require.Equal(t, DefaultJITRunnerImage, c.Image)
	require.Equal(t, []string{JITRunnerCommand}, c.Command)

	off := defaults
	off.JITRunnerImage = ""
	c = runner(jitInput(), off)
	require.Equal(t, "summerwind/actions-runner:latest", c.Image, "an empty --jit-runner-image falls back to --runner-image")
	require.Empty(t, c.Command)
}
