package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IdleRunnersSetting is what arcflow.dev/idle-runners asks for: a fixed
// buffer (Fixed), or with "auto" a warm buffer sized from the pool's own
// arrival rate and time to ready, never above Max when Max > 0.
type IdleRunnersSetting struct {
	Fixed int
	Auto  bool
	Max   int
}

// IdleRunnersSetting parses the HRA's arcflow.dev/idle-runners: "K", "auto",
// or "auto,max=K". Without the annotation it is a fixed buffer of 0, ARC's
// behaviour.
func (h *HorizontalRunnerAutoscaler) IdleRunnersSetting() (IdleRunnersSetting, error) {
	value, ok := h.Annotations[IdleRunnersAnnotation]
	if !ok {
		return IdleRunnersSetting{}, nil
	}
	bad := func() (IdleRunnersSetting, error) {
		return IdleRunnersSetting{}, fmt.Errorf(`annotation %s: want a whole number of runners (0 or more), "auto" or "auto,max=K"; got %q`,
			IdleRunnersAnnotation, value)
	}
	if n, err := strconv.Atoi(value); err == nil {
		if n < 0 {
			return bad()
		}
		return IdleRunnersSetting{Fixed: n}, nil
	}
	parts := strings.Split(value, ",")
	if strings.TrimSpace(parts[0]) != "auto" || len(parts) > 2 {
		return bad()
	}
	s := IdleRunnersSetting{Auto: true}
	if len(parts) == 2 {
		key, n, found := strings.Cut(strings.TrimSpace(parts[1]), "=")
		limit, err := strconv.Atoi(n)
		if !found || key != "max" || err != nil || limit < 1 {
			return bad()
		}
		s.Max = limit
	}
	return s, nil
}

// WarmRunnersStatus is what an HRA with arcflow.dev/idle-runners: auto chose
// last, and from what.
type WarmRunnersStatus struct {
	// Runners is the warm buffer kept on top of the jobs, within maxReplicas.
	Runners int `json:"runners"`
	// ArrivalRate is the pool's smoothed rate of queued jobs, e.g. "20.5/min".
	// +optional
	ArrivalRate string `json:"arrivalRate,omitempty"`
	// TimeToReady is a high percentile of how long the pool's recent jobs
	// that found no warm runner waited: from the job's queueing, or its
	// runner's creation when that came first, to its start; before any job
	// waited, pod created -> runner registered.
	// +optional
	TimeToReady *metav1.Duration `json:"timeToReady,omitempty"`
	// LastArrivalTime is when the autoscaler last heard of a queued job, up to
	// 10 s behind: the other autoscalers of its scope read it to tell whether
	// jobs still come (their buffers outlast their own jobs while they do).
	// +optional
	// +nullable
	LastArrivalTime *metav1.Time `json:"lastArrivalTime,omitempty"`
}

// PoolWarmStatus is a pool's side of the warm buffer: what its autoscaler
// asked to keep warm, and what idle runners cost so far.
type PoolWarmStatus struct {
	// Runners is the warm buffer the pool's autoscaler asks for.
	Runners int `json:"runners"`
	// IdleRunnerSeconds adds up, over time, the pool's registered runners
	// that have no job (registered runners less the jobs its autoscaler
	// counts, never below 0).
	IdleRunnerSeconds int64 `json:"idleRunnerSeconds"`
}

// FormatArrivalRate writes a rate in jobs per second as WarmRunnersStatus shows it.
func FormatArrivalRate(perSecond float64) string {
	return strconv.FormatFloat(perSecond*float64(time.Minute/time.Second), 'f', 1, 64) + "/min"
}
