package worker

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/arcflow/arcflow/internal/temporalerr"
)

// temporalFailed says on the resource why its change has not reached its
// workflow, and returns err for the queue to try again. Temporal down is
// Accepted=Unknown (nothing is wrong with the resource, and the change is
// kept); Temporal without arcflow's namespace or search attributes is
// Accepted=False, since only an operator mends it. Neither is a spec error.
func (w *ResourceWatcher) temporalFailed(ctx context.Context, kind string, u *unstructured.Unstructured, unsupported []string, err error) error {
	if ctx.Err() != nil {
		return err // shutting down: the next leader syncs every resource anyway
	}
	problem := temporalerr.Classify(err, w.TemporalNamespace)
	status := metav1.ConditionUnknown
	if problem.Reason == temporalerr.ReasonNotSetUp {
		status = metav1.ConditionFalse
	} else {
		w.waiting.add(keyOf(kind, u)) // sent again as soon as Temporal answers (temporalreturn.go)
	}
	w.setConditions(ctx, kind, u, status, problem.Reason, problem.Message, unsupported)
	return err
}

// waitsForTemporal tells whether the resource's last change is still on its
// way to its workflow, as its Accepted condition records it: a resync sends
// it again even if the queue that held it is gone (a new leader).
func waitsForTemporal(u *unstructured.Unstructured) bool {
	c, ok := conditionOf(u, "Accepted")
	if !ok {
		return true
	}
	switch c.Reason {
	case temporalerr.ReasonUnavailable, temporalerr.ReasonNotSetUp:
		return true
	}
	return c.ObservedGeneration != u.GetGeneration()
}
