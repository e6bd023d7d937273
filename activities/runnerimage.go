package activities

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// DefaultJITRunnerImage is the runner image of JIT and scale-set pools that
// name none (--jit-runner-image): GitHub's, as ARC's gha-runner-scale-set
// chart uses. Summerwind's image only registers with RUNNER_TOKEN.
const DefaultJITRunnerImage = "ghcr.io/actions/actions-runner:latest"

// JITRunnerCommand starts GitHub's image, which has no entrypoint: run.sh
// reads ACTIONS_RUNNER_INPUT_JITCONFIG (the chart's command too).
const JITRunnerCommand = gitHubRunnerHome + "/run.sh"

// gitHubRunnerHome is where GitHub's image keeps the runner (its WORKDIR).
const gitHubRunnerHome = "/home/runner"

// RunnerImageKind is what a well-known runner image's entrypoint does.
type RunnerImageKind int

const (
	// OtherRunnerImage is an image arcflow knows nothing of.
	OtherRunnerImage RunnerImageKind = iota
	// SummerwindRunnerImage is ARC's summerwind/actions-runner (and its
	// -dind variants): its entrypoint runs config.sh with RUNNER_TOKEN and
	// exits 1 without it; it never reads a JIT configuration.
	SummerwindRunnerImage
	// GitHubRunnerImage is GitHub's actions/actions-runner: no ENTRYPOINT or
	// CMD, so a container without a command cannot be created.
	GitHubRunnerImage
)

// RunnerImageKindOf classifies an image reference, whatever its registry,
// tag or digest.
func RunnerImageKindOf(image string) RunnerImageKind {
	repo, _, _ := strings.Cut(image, "@")
	if colon := strings.LastIndex(repo, ":"); colon > strings.LastIndex(repo, "/") {
		repo = repo[:colon] // a tag, not a registry's port
	}
	owner, name := path.Base(path.Dir(repo)), path.Base(repo)
	switch {
	case owner == "summerwind" && (name == "actions-runner" || strings.HasPrefix(name, "actions-runner-dind")):
		return SummerwindRunnerImage
	case owner == "actions" && name == "actions-runner":
		return GitHubRunnerImage
	}
	return OtherRunnerImage
}

// UserRunnerContainer is the runner container as a template gives it: the
// container named runner, if any, its image defaulting to the spec's image.
// Neither image may be set; arcflow's defaults fill them later.
func UserRunnerContainer(spec v1alpha1.RunnerSpec) corev1.Container {
	c := corev1.Container{Name: calls.RunnerContainerName}
	for _, have := range spec.Containers {
		if have.Name == calls.RunnerContainerName {
			c = have
		}
	}
	if c.Image == "" {
		c.Image = spec.Image
	}
	return c
}

// JITImageProblem says why a JIT runner container cannot start from its JIT
// configuration, where its image tells: a well-known image left to its own
// entrypoint (no command, no args). An empty image gets arcflow's default,
// which can. reason is empty when nothing is known to be wrong.
func JITImageProblem(c corev1.Container) (reason, message string) {
	if len(c.Command) > 0 || len(c.Args) > 0 {
		return "", ""
	}
	const command = `command: ["` + JITRunnerCommand + `"] on the runner container`
	const orEmpty = ", or leave image empty (arcflow's --jit-runner-image, started with run.sh)"
	switch RunnerImageKindOf(c.Image) {
	case SummerwindRunnerImage:
		return "TokenOnlyImage", "the runner image " + c.Image + " registers with RUNNER_TOKEN only: its entrypoint exits 1 " +
			"without one and never reads the JIT configuration this pool's runners get; set image " + DefaultJITRunnerImage +
			" with " + command + orEmpty
	case GitHubRunnerImage:
		return "NoCommand", "the runner image " + c.Image + " has no entrypoint, so its container cannot be created " +
			"without a command; set " + command + orEmpty
	}
	return "", ""
}
