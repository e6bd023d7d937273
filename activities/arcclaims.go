package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// AdoptARCClaims relabels ARC's claims as the pool's volume slots: arcflow's
// pool, slot and hash labels (which DeleteVolumes selects by), the RunnerSet
// as owner in place of a StatefulSet (whose deletion would otherwise take a
// claim with it), and without ARC's runner-statefulset-name (with which ARC's
// claim controller, were it started again, would delete a claim whose
// StatefulSet is gone). The claim keeps its name, volume and data; the slot
// names it (VolumeSlotRef.Claims). A claim already gone is skipped, and each
// patch is conditional on the version read, so a concurrent change retries.
func (k *Kubernetes) AdoptARCClaims(ctx context.Context, in AdoptARCClaimsInput) error {
	claims := k.Client.CoreV1().PersistentVolumeClaims(in.Namespace)
	for _, slot := range in.Slots {
		for _, name := range slot.Claims {
			claim, err := claims.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				continue
			case err != nil:
				return fmt.Errorf("get ARC claim %s/%s: %w", in.Namespace, name, err)
			}
			owners := []metav1.OwnerReference{}
			for _, o := range claim.OwnerReferences {
				if o.Kind != "StatefulSet" && (in.Owner == nil || o.UID != in.Owner.UID) {
					owners = append(owners, o)
				}
			}
			owners = append(owners, deletedWithPool(in.Owner)...)
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
				"resourceVersion": claim.ResourceVersion,
				"ownerReferences": owners,
				"labels": map[string]any{
					LabelPool: in.Pool, LabelRunnerSet: in.Pool, LabelVolumeSlot: strconv.Itoa(slot.Index),
					LabelVolumeHash: slot.Hash, ARCRunnerStatefulSetLabel: nil,
				},
			}})
			if err != nil {
				return fmt.Errorf("adopt ARC claim %s/%s: %w", in.Namespace, name, err)
			}
			_, err = claims.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
			if apierrors.IsForbidden(err) {
				// An RBAC without the takeover rules: say so at once.
				return temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("adopt ARC claim %s/%s: %v (the worker's RBAC needs get and patch on persistentvolumeclaims)", in.Namespace, name, err),
					ErrTypeForbidden, nil)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("adopt ARC claim %s/%s: %w", in.Namespace, name, err)
			}
		}
	}
	return nil
}
