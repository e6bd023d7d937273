package v1alpha1

import (
	"fmt"
	"strconv"
)

// IdleRunnersAnnotation asks an HRA for an idle buffer (beyond ARC): the
// autoscaler keeps this many runners on top of what the jobs need, within
// maxReplicas, so the next job starts on a registered runner instead of waiting
// for a pod. minReplicas, by contrast, counts busy runners too. An annotation
// keeps an ARC manifest valid for ARC itself.
const IdleRunnersAnnotation = "arcflow.dev/idle-runners"

// IdleRunners is the HRA's idle buffer: 0 without the annotation.
func (h *HorizontalRunnerAutoscaler) IdleRunners() (int, error) {
	value, ok := h.Annotations[IdleRunnersAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("annotation %s: want a whole number of runners, 0 or more; got %q", IdleRunnersAnnotation, value)
	}
	return n, nil
}
