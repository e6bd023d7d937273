package v1alpha1

import (
	"fmt"
	"strconv"
)

// IdleRunnersAnnotation asks an HRA for an idle buffer (beyond ARC): the
// autoscaler keeps this many runners on top of what the jobs need, within
// maxReplicas, so the next job starts on a registered runner instead of waiting
// for a pod. minReplicas, by contrast, counts busy runners too. "auto" (or
// "auto,max=K") sizes the buffer from the pool's own demand instead
// (IdleRunnersSetting). An annotation keeps an ARC manifest valid for ARC itself.
const IdleRunnersAnnotation = "arcflow.dev/idle-runners"

// IdleRunners is the HRA's fixed idle buffer: 0 without the annotation, and
// with "auto", whose buffer the autoscaler sizes.
func (h *HorizontalRunnerAutoscaler) IdleRunners() (int, error) {
	s, err := h.IdleRunnersSetting()
	return s.Fixed, err
}

// PriorityAnnotation orders the HRAs that match the same job (beyond ARC, which
// takes the first it finds): the highest priority is tried first, then ARC's
// order (repository, organization, enterprise; then namespace/name). When the
// chosen HRA's pool is at maxReplicas, the job is reserved in the next one
// instead of queueing behind the full pool (spill-over). Without the annotation
// every HRA has priority 0.
const PriorityAnnotation = "arcflow.dev/priority"

// Priority is the HRA's place among HRAs that match the same jobs: 0 without the
// annotation; higher goes first.
func (h *HorizontalRunnerAutoscaler) Priority() (int, error) {
	value, ok := h.Annotations[PriorityAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, fmt.Errorf("annotation %s: want a whole number, higher goes first; got %q", PriorityAnnotation, value)
	}
	return n, nil
}

// JITConfigAnnotation, "true" on a RunnerDeployment or RunnerSet, registers
// each runner with GitHub's generate-jitconfig when it is created (beyond ARC):
// one call, no registration token, and the runner's GitHub ID known at once.
// The pod starts from ACTIONS_RUNNER_INPUT_JITCONFIG, which needs a runner image
// whose entrypoint passes it to run.sh (actions/runner's does). JIT runners are
// ephemeral.
const JITConfigAnnotation = "arcflow.dev/jit-config"

// JITConfig reports whether a pool's annotations ask for JIT runners; ephemeral
// is whether its runners are ephemeral.
func JITConfig(annotations map[string]string, ephemeral bool) (bool, error) {
	value, ok := annotations[JITConfigAnnotation]
	if !ok {
		return false, nil
	}
	jit, err := strconv.ParseBool(value)
	switch {
	case err != nil:
		return false, fmt.Errorf("annotation %s: want \"true\" or \"false\"; got %q", JITConfigAnnotation, value)
	case jit && !ephemeral:
		return false, fmt.Errorf("annotation %s: JIT runners are ephemeral; remove ephemeral: false", JITConfigAnnotation)
	}
	return jit, nil
}

// RerunLostJobsAnnotation on a RunnerDeployment or RunnerSet re-runs, through
// GitHub's API, a job whose runner infrastructure took away while it ran (its
// pod deleted by someone else, evicted or preempted, its node gone, its runner
// container OOM-killed): "true" re-runs such a job once, a number N up to
// MaxRerunLostJobs at most N times, "false" or "0" never (the default: a
// re-run needs the credentials' actions: write, and repeats the job's side
// effects). Beyond ARC, which leaves the job failed.
const RerunLostJobsAnnotation = "arcflow.dev/rerun-lost-jobs"

// MaxRerunLostJobs bounds the annotation: GitHub allows 50 attempts per
// workflow run, and a job lost more than a few times has a cause a re-run
// does not fix.
const MaxRerunLostJobs = 10

// RerunLostJobs is how many times a pool re-runs each job lost to
// infrastructure: 0 without the annotation.
func RerunLostJobs(annotations map[string]string) (int, error) {
	value, ok := annotations[RerunLostJobsAnnotation]
	if !ok {
		return 0, nil
	}
	if on, err := strconv.ParseBool(value); err == nil {
		if on {
			return 1, nil
		}
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || n > MaxRerunLostJobs {
		return 0, fmt.Errorf("annotation %s: want \"true\" (once), \"false\" or a count from 0 to %d; got %q",
			RerunLostJobsAnnotation, MaxRerunLostJobs, value)
	}
	return n, nil
}
