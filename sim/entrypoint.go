package sim

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/sim/kubelet"
)

// Start is what a runner container's process does when its pod runs, as its
// image's entrypoint would (Entrypoint).
type Start int

const (
	// StartAsAny registers with whatever credential the pod's env has: an
	// image the simulator knows nothing of (tests name theirs "runner"), or a
	// command of the user's own.
	StartAsAny Start = iota
	// StartToken is summerwind's startup.sh: config.sh with RUNNER_TOKEN.
	StartToken
	// StartJIT is run.sh with ACTIONS_RUNNER_INPUT_JITCONFIG.
	StartJIT
	// ExitAtStart: the process exits 1 at once, never registered.
	ExitAtStart
	// NotCreated: GitHub's image with no command has nothing to run. The
	// kubelet really reports CreateContainerError and keeps the pod Pending
	// for ever; the simulator ends it Failed at once instead, the path of a
	// runner that cannot start, which arcflow handles (its pool backs off),
	// so a test of such a template fails fast rather than hangs. arcflow
	// names the cause statically (RunnerImageUnfit), since it does not watch
	// container states.
	NotCreated
)

// Paths of run.sh: GitHub's image works in /home/runner; summerwind's keeps
// the runner in /runnertmp until startup.sh copies it to /runner, which a
// command of its own skips.
var (
	gitHubRunSh     = map[string]bool{activities.JITRunnerCommand: true, "run.sh": true, "./run.sh": true}
	summerwindRunSh = map[string]bool{"/runnertmp/run.sh": true}
)

// Entrypoint decides what a runner container starts as, from its image, its
// command and args (Kubernetes' rules: a command replaces the image's
// ENTRYPOINT and CMD, args alone its CMD) and which variables its env sets.
func Entrypoint(image string, command, args []string, env map[string]corev1.EnvVar) Start {
	program, runSh := "", gitHubRunSh
	if len(command) > 0 {
		program = command[0]
	}
	switch activities.RunnerImageKindOf(image) {
	case activities.SummerwindRunnerImage:
		runSh = summerwindRunSh
		switch {
		case len(command) == 0 && len(args) == 0: // startup.sh
			return needs(env, activities.TokenSecretKey, StartToken)
		case len(command) == 0:
			program = args[0] // ENTRYPOINT bash -c runs it
		}
	case activities.GitHubRunnerImage:
		switch {
		case len(command) == 0 && len(args) == 0:
			return NotCreated
		case len(command) == 0:
			program = args[0] // no ENTRYPOINT: args are the command
		}
	default:
		return StartAsAny
	}
	if runSh[program] {
		return needs(env, activities.JITConfigSecretKey, StartJIT)
	}
	return StartAsAny
}

// needs is start when env sets the variable, else an exit at once, as
// startup.sh's check and an unconfigured run.sh do.
func needs(env map[string]corev1.EnvVar, name string, start Start) Start {
	if e, ok := env[name]; ok && (e.Value != "" || e.ValueFrom != nil) {
		return start
	}
	return ExitAtStart
}

// errNoCredential: the variable the entrypoint needs came empty from its
// Secret; the process exits 1.
var errNoCredential = errors.New("the runner's credential is empty")

// runnerContainer is the pod's runner container, or an empty one.
func runnerContainer(pod *corev1.Pod) corev1.Container {
	for _, c := range pod.Spec.Containers {
		if c.Name == "runner" {
			return c
		}
	}
	return corev1.Container{}
}

// crash ends the pod Failed, as a runner container that exits 1 at start
// does (restartPolicy Never).
func (r *Runners) crash(ctx context.Context, pod *corev1.Pod, name, why string) {
	r.Log.Debug("simulated runner exits at start", "runner", name, "why", why)
	if err := kubelet.EndPod(ctx, r.Kube, pod.Namespace, pod.Name, corev1.PodFailed); err != nil && ctx.Err() == nil {
		r.Log.Warn("simulated runner could not crash", "runner", name, "error", err)
	}
}
