package activities

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A RunnerSet runner's volumes are its pool's volume slot (workflows'
// pool_volumes.go): one claim per volumeClaimTemplate, named after the slot and
// the templates' hash, owned by the RunnerSet, and mounted as a plain claim, so
// the claim outlives the runner's StatefulSet and the next runner at the slot
// mounts it.

// Labels on a slot's claims.
const (
	LabelVolumeSlot = "arcflow.dev/volume-slot"
	LabelVolumeHash = "arcflow.dev/volume-hash"
)

// SlotClaimName is the claim of template at a pool's slot.
func SlotClaimName(template, pool string, slot VolumeSlotRef) string {
	if name := slot.Claims[template]; name != "" {
		return name
	}
	return fmt.Sprintf("%s-%s-%s-%d", template, pool, slot.Hash, slot.Index)
}

// ensureSlotClaims creates the slot's claims that do not exist yet.
func (k *Kubernetes) ensureSlotClaims(ctx context.Context, in RunnerPodInput) error {
	if in.VolumeSlot == nil || in.StatefulSet == nil {
		return nil
	}
	for _, t := range in.StatefulSet.VolumeClaimTemplates {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name: SlotClaimName(t.Name, in.Pool, *in.VolumeSlot), Namespace: in.Namespace,
				Labels: map[string]string{LabelPool: in.Pool, LabelRunnerSet: in.Pool,
					LabelVolumeSlot: strconv.Itoa(in.VolumeSlot.Index), LabelVolumeHash: in.VolumeSlot.Hash},
				Annotations: t.Annotations,
			},
			Spec: t.Spec,
		}
		claim.OwnerReferences = deletedWithPool(in.Owner)
		_, err := k.Client.CoreV1().PersistentVolumeClaims(in.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
			return invalidSpec("volume claim", in, err)
		case err != nil:
			return fmt.Errorf("create volume claim %s/%s: %w", in.Namespace, claim.Name, err)
		}
	}
	return nil
}

// DeleteVolumes deletes the claims of the slots. Claims already gone are
// success.
func (k *Kubernetes) DeleteVolumes(ctx context.Context, in DeleteVolumesInput) error {
	claims := k.Client.CoreV1().PersistentVolumeClaims(in.Namespace)
	for _, slot := range in.Slots {
		selector := fmt.Sprintf("%s=%s,%s=%d,%s=%s", LabelPool, in.Pool, LabelVolumeSlot, slot.Index, LabelVolumeHash, slot.Hash)
		list, err := claims.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return fmt.Errorf("list volume claims of %s/%s slot %d: %w", in.Namespace, in.Pool, slot.Index, err)
		}
		for _, c := range list.Items {
			if err := claims.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete volume claim %s/%s: %w", in.Namespace, c.Name, err)
			}
		}
	}
	return nil
}
