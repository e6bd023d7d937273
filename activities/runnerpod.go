package activities

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// PodDefaults are the controller-wide defaults of ARC's flags.
type PodDefaults struct {
	RunnerImage    string   // --runner-image
	JITRunnerImage string   // --jit-runner-image; empty: RunnerImage
	DockerImage    string   // --docker-image
	DockerGID      string   // --docker-gid
	RegistryMirror string   // --docker-registry-mirror
	CommonLabels   []string // --common-runner-labels
	PullSecrets    []string // --runner-image-pull-secret
}

// DefaultPodDefaults are ARC's flag defaults, and arcflow's JIT runner image.
func DefaultPodDefaults() PodDefaults {
	return PodDefaults{RunnerImage: "summerwind/actions-runner:latest", JITRunnerImage: DefaultJITRunnerImage,
		DockerImage: "docker:dind", DockerGID: "1001"}
}

// TokenSecretName is a runner's own Secret: a JIT runner's configuration, or
// the registration token of a RunnerSet runner (or of a pod an earlier version made).
func TokenSecretName(runnerName string) string { return runnerName + "-registration-token" }

// BuildRunnerPod builds the runner pod of ARC's §5.5: the runner container with its
// environment, a docker:dind sidecar unless disabled, the shared volumes, and
// restartPolicy Never. The token comes from a Secret, never from the pod spec.
func BuildRunnerPod(in RunnerPodInput, defaults PodDefaults) *corev1.Pod {
	spec := in.Spec
	labels := map[string]string{LabelRunner: "", LabelPool: in.Pool}
	for k, v := range in.Labels {
		labels[k] = v
	}
	if in.TemplateHash != "" {
		labels[LabelTemplateHash] = in.TemplateHash
	}
	if in.Kind == v1alpha1.KindRunnerSet {
		labels[LabelRunnerSet] = in.Pool
	} else {
		labels[LabelRunnerDeployment] = in.Pool
	}

	annotations := in.Annotations
	if in.ReadyUntold {
		annotations = maps.Clone(in.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[calls.AnnotationReadyUntold] = "true"
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeSelector:                  spec.NodeSelector,
			ServiceAccountName:            spec.ServiceAccountName,
			AutomountServiceAccountToken:  spec.AutomountServiceAccountToken,
			SecurityContext:               spec.SecurityContext,
			Affinity:                      spec.Affinity,
			Tolerations:                   spec.Tolerations,
			PriorityClassName:             spec.PriorityClassName,
			TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds,
			EphemeralContainers:           spec.EphemeralContainers,
			HostAliases:                   spec.HostAliases,
			TopologySpreadConstraints:     spec.TopologySpreadConstraints,
			RuntimeClassName:              spec.RuntimeClassName,
			DNSPolicy:                     spec.DnsPolicy,
			DNSConfig:                     spec.DnsConfig,
			EnableServiceLinks:            spec.EnableServiceLinks,
			InitContainers:                spec.InitContainers,
			ImagePullSecrets:              spec.ImagePullSecrets,
			Volumes:                       spec.Volumes,
		},
	}
	if in.Owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*in.Owner}
	}
	if kubernetesMode(spec) && spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = KubernetesModeAccount(in.Pool)
	}
	for _, name := range defaults.PullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}

	sidecar := spec.HasDockerSidecar()
	runner := runnerContainer(in, defaults, sidecar)
	containers := spec.Containers
	if len(containers) == 0 {
		containers = []corev1.Container{runner}
		if sidecar {
			containers = append(containers, dockerContainer(spec, defaults, runner.Image))
		}
	} else {
		containers = append([]corev1.Container(nil), containers...)
		for i := range containers {
			switch containers[i].Name {
			case calls.RunnerContainerName:
				containers[i] = mergeRunnerContainer(containers[i], runner)
			case calls.DockerContainerName:
				if containers[i].Image == "" {
					containers[i].Image = defaults.DockerImage
				}
			}
		}
	}
	pod.Spec.Containers = append(containers, spec.SidecarContainers...)
	pod.Spec.Volumes = append(pod.Spec.Volumes, defaultVolumes(spec, sidecar)...)
	return pod
}

func runnerContainer(in RunnerPodInput, defaults PodDefaults, sidecar bool) corev1.Container {
	spec := in.Spec
	image, command := defaultImage(in, defaults)
	pullPolicy := spec.ImagePullPolicy
	if pullPolicy == "" {
		pullPolicy = corev1.PullAlways
	}
	labels := append(append([]string(nil), spec.Labels...), defaults.CommonLabels...)
	dindInRunner := spec.IsDockerdWithinRunnerContainer() && !kubernetesMode(spec)
	dockerEnabled := spec.IsDockerEnabled() && !kubernetesMode(spec) // job containers are pods of their own
	env := []corev1.EnvVar{
		{Name: "RUNNER_ORG", Value: spec.Organization},
		{Name: "RUNNER_REPO", Value: spec.Repository},
		{Name: "RUNNER_ENTERPRISE", Value: spec.Enterprise},
		{Name: "RUNNER_LABELS", Value: strings.Join(labels, ",")},
		{Name: "RUNNER_GROUP", Value: spec.Group},
		{Name: "DOCKER_ENABLED", Value: strconv.FormatBool(dockerEnabled || dindInRunner)},
		{Name: "DOCKERD_IN_RUNNER", Value: strconv.FormatBool(dindInRunner)},
		{Name: "GITHUB_URL", Value: in.GitHubURL},
		{Name: "RUNNER_WORKDIR", Value: workDir(spec, image)},
		{Name: "RUNNER_EPHEMERAL", Value: strconv.FormatBool(spec.IsEphemeral())},
		{Name: "RUNNER_STATUS_UPDATE_HOOK", Value: "false"},
		{Name: "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT", Value: "arcflow"},
		{Name: "RUNNER_NAME", Value: in.Name},
	}
	// The pod reads what it registers with from its Secret, never from its spec.
	credential := TokenSecretKey // RUNNER_TOKEN
	if in.JIT {
		credential = JITConfigSecretKey // the runner's run.sh starts from it, skipping config.sh
	}
	env = append(env, corev1.EnvVar{Name: credential, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: runnerSecretName(in)}, Key: credential,
	}}})
	if sidecar {
		env = append(env, corev1.EnvVar{Name: "DOCKER_HOST", Value: "unix:///run/docker.sock"})
	}
	if kubernetesMode(spec) {
		env = append(env, kubernetesModeEnv(spec, image)...)
	}
	if dindInRunner {
		if spec.DockerMTU != nil {
			env = append(env, corev1.EnvVar{Name: "MTU", Value: strconv.FormatInt(*spec.DockerMTU, 10)})
		}
		if mirror := registryMirror(spec, defaults); mirror != "" {
			env = append(env, corev1.EnvVar{Name: "DOCKER_REGISTRY_MIRROR", Value: mirror})
		}
	}
	mounts := []corev1.VolumeMount{{Name: "runner", MountPath: "/runner"}, {Name: "work", MountPath: workDir(spec, image)}}
	if sidecar {
		mounts = append(mounts, corev1.VolumeMount{Name: "var-run", MountPath: "/run"})
	}
	c := corev1.Container{
		Name:            calls.RunnerContainerName,
		Image:           image,
		Command:         command,
		ImagePullPolicy: pullPolicy,
		Env:             append(append([]corev1.EnvVar(nil), spec.Env...), env...),
		EnvFrom:         spec.EnvFrom,
		Resources:       spec.Resources,
		VolumeMounts:    append(mounts, spec.VolumeMounts...),
	}
	if dindInRunner && (spec.SecurityContext == nil || spec.SecurityContext.SELinuxOptions == nil) {
		c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	}
	return c
}

// defaultImage is the runner container's image and command. A template that
// names no image gets --runner-image, or, for JIT runners, --jit-runner-image:
// summerwind's entrypoint never reads a JIT configuration. GitHub's image has
// no entrypoint, so it comes with run.sh unless the template gave a command.
func defaultImage(in RunnerPodInput, defaults PodDefaults) (string, []string) {
	user := UserRunnerContainer(in.Spec)
	switch {
	case user.Image != "":
		return user.Image, nil
	case !in.JIT || defaults.JITRunnerImage == "":
		return defaults.RunnerImage, nil
	case len(user.Command) > 0:
		return defaults.JITRunnerImage, nil
	}
	return defaults.JITRunnerImage, []string{JITRunnerCommand}
}

// workDir is where the work volume is mounted: the template's workDir, else
// where the image's runner works by default (a JIT configuration's _work,
// under GitHub's image's /home/runner), so the docker sidecar and job pods
// see the runner's workspace.
func workDir(spec v1alpha1.RunnerSpec, image string) string {
	if spec.WorkDir == "" && RunnerImageKindOf(image) == GitHubRunnerImage {
		return gitHubRunnerHome + "/_work"
	}
	return spec.WorkDirOrDefault()
}

// mergeRunnerContainer fills a user-supplied runner container with the defaults.
func mergeRunnerContainer(user, defaults corev1.Container) corev1.Container {
	if user.Image == "" {
		user.Image = defaults.Image
	}
	if len(user.Command) == 0 {
		user.Command = defaults.Command // set only for an image arcflow chose
	}
	if user.ImagePullPolicy == "" {
		user.ImagePullPolicy = defaults.ImagePullPolicy
	}
	have := map[string]bool{}
	for _, e := range user.Env {
		have[e.Name] = true
	}
	for _, e := range defaults.Env {
		if !have[e.Name] {
			user.Env = append(user.Env, e)
		}
	}
	mounted := map[string]bool{}
	for _, m := range user.VolumeMounts {
		mounted[m.Name] = true
	}
	for _, m := range defaults.VolumeMounts {
		if !mounted[m.Name] {
			user.VolumeMounts = append(user.VolumeMounts, m)
		}
	}
	return user
}

func registryMirror(spec v1alpha1.RunnerSpec, defaults PodDefaults) string {
	if spec.DockerRegistryMirror != nil {
		return *spec.DockerRegistryMirror
	}
	return defaults.RegistryMirror
}

func dockerContainer(spec v1alpha1.RunnerSpec, defaults PodDefaults, runnerImage string) corev1.Container {
	gid := defaults.DockerGID
	if image := spec.Image; strings.Contains(image, "22.04") || strings.Contains(image, "24.04") {
		gid = "121"
	}
	if RunnerImageKindOf(runnerImage) == GitHubRunnerImage {
		gid = "123" // its runner user's docker group, as ARC's scale-set chart's dind mode says
	}
	args := []string{"dockerd", "--host=unix:///run/docker.sock", "--group=$(DOCKER_GROUP_GID)"}
	env := []corev1.EnvVar{{Name: "DOCKER_GROUP_GID", Value: gid}}
	if spec.DockerMTU != nil {
		mtu := strconv.FormatInt(*spec.DockerMTU, 10)
		args = append(args, "--mtu="+mtu)
		env = append(env, corev1.EnvVar{Name: "DOCKERD_ROOTLESS_ROOTLESSKIT_MTU", Value: mtu})
	}
	if mirror := registryMirror(spec, defaults); mirror != "" {
		args = append(args, "--registry-mirror="+mirror)
	}
	return corev1.Container{
		Name:            calls.DockerContainerName,
		Image:           defaults.DockerImage,
		Args:            args,
		Env:             append(env, spec.DockerEnv...),
		Resources:       spec.DockerdContainerResources,
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		VolumeMounts: append([]corev1.VolumeMount{
			{Name: "runner", MountPath: "/runner"},
			{Name: "work", MountPath: workDir(spec, runnerImage)},
			{Name: "var-run", MountPath: "/run"},
		}, spec.DockerVolumeMounts...),
		// Keep dockerd alive while the runner finishes its job (ARC's preStop).
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{
			"/bin/sh", "-c", "timeout \"${RUNNER_GRACEFUL_STOP_TIMEOUT:-15}\" /bin/sh -c \"while [ -e /runner/.runner ]; do sleep 1; done\"",
		}}}},
	}
}

// defaultVolumes adds the runner, work and var-run volumes unless the user
// supplied volumes of the same names.
func defaultVolumes(spec v1alpha1.RunnerSpec, sidecar bool) []corev1.Volume {
	have := map[string]bool{}
	for _, v := range spec.Volumes {
		have[v.Name] = true
	}
	var out []corev1.Volume
	add := func(v corev1.Volume) {
		if !have[v.Name] {
			out = append(out, v)
		}
	}
	runnerVol := corev1.EmptyDirVolumeSource{SizeLimit: spec.VolumeSizeLimit}
	if spec.VolumeStorageMedium != nil {
		runnerVol.Medium = corev1.StorageMedium(*spec.VolumeStorageMedium)
	}
	add(corev1.Volume{Name: "runner", VolumeSource: corev1.VolumeSource{EmptyDir: &runnerVol}})
	if kubernetesMode(spec) && spec.WorkVolumeClaimTemplate != nil {
		add(workVolume(spec.WorkVolumeClaimTemplate))
	} else {
		add(corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	if sidecar {
		limit := resource.MustParse(v1alpha1.DefaultDockerVarRunVolumeLimit)
		if spec.DockerVarRunVolumeSizeLimit != nil {
			limit = *spec.DockerVarRunVolumeSizeLimit
		}
		add(corev1.Volume{Name: "var-run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}})
	}
	return out
}
