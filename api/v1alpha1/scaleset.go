package v1alpha1

import (
	"fmt"
	"regexp"
)

// ScaleSetAnnotation on a RunnerDeployment or RunnerSet makes its runners join
// the runner scale set of that name (beyond ARC): arcflow's listener finds the
// set in its runner group, or creates it with the pool's labels, and reads the
// set's jobs from GitHub's Actions service by long poll. No webhook and no
// inbound endpoint are needed; runners register with the set's JIT
// configuration and are ephemeral. The pool's HRA still gives min, max, the
// scale-down delay and scheduled overrides.
const ScaleSetAnnotation = "arcflow.dev/scale-set"

// ScaleSetRunnerGroupAnnotation names the runner group the set is in; without
// it, the Default group.
const ScaleSetRunnerGroupAnnotation = "arcflow.dev/scale-set-runner-group"

// scaleSetName is what the annotation accepts: the set's name is also a label
// jobs target with runs-on.
var scaleSetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ScaleSetRef is a pool's scale set, from its annotations.
type ScaleSetRef struct {
	Name        string `json:"name"`
	RunnerGroup string `json:"runnerGroup,omitempty"`
}

// ScaleSetOf reads a pool's scale set annotations; ok is false without them.
func ScaleSetOf(annotations map[string]string, ephemeral bool) (ref ScaleSetRef, ok bool, err error) {
	name, ok := annotations[ScaleSetAnnotation]
	group := annotations[ScaleSetRunnerGroupAnnotation]
	switch {
	case !ok && group != "":
		return ScaleSetRef{}, false, fmt.Errorf("annotation %s needs %s", ScaleSetRunnerGroupAnnotation, ScaleSetAnnotation)
	case !ok:
		return ScaleSetRef{}, false, nil
	case !scaleSetName.MatchString(name):
		return ScaleSetRef{}, false, fmt.Errorf("annotation %s: want a name of letters, digits, '.', '_' and '-', at most 100; got %q", ScaleSetAnnotation, name)
	case !ephemeral:
		return ScaleSetRef{}, false, fmt.Errorf("annotation %s: a scale set's runners are ephemeral; remove ephemeral: false", ScaleSetAnnotation)
	}
	return ScaleSetRef{Name: name, RunnerGroup: group}, true, nil
}

// ScaleSetStatus is in both pool resources' status (beyond ARC).
type ScaleSetStatus struct {
	// ScaleSetID is the id of the runner scale set the pool's runners join
	// (arcflow.dev/scale-set); absent without one.
	// +optional
	ScaleSetID int64 `json:"scaleSetId,omitempty"`
}
