package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// PoolStatus is a pool's status, as ARC shows it for RunnerDeployment and RunnerSet.
type PoolStatus struct {
	Desired   int `json:"desiredReplicas"`
	Replicas  int `json:"replicas"`
	Updated   int `json:"updatedReplicas"`
	Ready     int `json:"readyReplicas"`
	Available int `json:"availableReplicas"`
	// FailingRunners and LastRunnerFailure say how many runners in a row could
	// not start, and why the last did; written at 0 and "" too, so a
	// registration clears them. The worker's watcher turns them into the
	// RunnersFailing condition.
	FailingRunners    int                     `json:"failingRunners"`
	LastRunnerFailure string                  `json:"lastRunnerFailure"`
	RunnerFailures    v1alpha1.RunnerFailures `json:"runnerFailures"`
	// VolumesInUse and VolumesFree count a RunnerSet's volume slots (a
	// RunnerDeployment's schema has no such fields; the API server drops them).
	VolumesInUse int `json:"volumesInUse"`
	VolumesFree  int `json:"volumesFree"`
	// TakenOver counts the live runners the pool took over rather than
	// created (v1alpha1.TakenOverStatus); written at 0 too, so the worker's
	// RunnersTakenOver condition turns False when the last one ends.
	TakenOver int `json:"takenOverRunners"`
	// Warm is the warm buffer of an autoscaler with arcflow.dev/idle-runners:
	// auto, and its idle runner-seconds; omitted for other pools.
	Warm v1alpha1.PoolWarmStatus `json:"warm,omitzero"`
}

// PoolStatusInput names the resource, its new status and the events to record.
type PoolStatusInput struct {
	Namespace, Kind, Name string
	Status                PoolStatus
	// Events are Normal events on the resource, e.g. "ScaledUp: created 2 runners".
	Events []string `json:",omitempty"`
}

// UpdatePoolStatus writes a pool's status subresource and records its events. A
// resource that is gone is success: its pool is draining.
func (k *Kubernetes) UpdatePoolStatus(ctx context.Context, in PoolStatusInput) error {
	gvr := PoolResource(in.Kind)
	patch, err := poolStatusPatch(in.Status)
	if err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", in.Kind, in.Namespace, in.Name, err)
	}
	obj, err := k.Dynamic.Resource(gvr).Namespace(in.Namespace).Patch(ctx, in.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", in.Kind, in.Namespace, in.Name, err)
	}
	for _, e := range in.Events {
		reason, message, _ := strings.Cut(e, ": ")
		on := corev1.ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: in.Kind, Name: in.Name, Namespace: in.Namespace,
			UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
		}
		if err := RecordEvent(ctx, k.Client, on, corev1.EventTypeNormal, reason, message); err != nil {
			// Events are best effort, as client-go's recorder treats them: one
			// refused (a namespace being deleted takes no new objects) must not
			// hold back the pool that is draining it.
			slog.Warn("cannot record a pool event", "pool", in.Namespace+"/"+in.Name, "reason", reason, "error", err)
		}
	}
	return nil
}
