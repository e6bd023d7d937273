package sim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// UsedVolumeAnnotation is what a simulated runner "writes" to each claim it
// mounts: its name, as a real runner leaves its caches on the volume.
const UsedVolumeAnnotation = "sim.arcflow.dev/written-by"

// writeVolumes records, for a runner that mounts claims, whether an earlier
// runner wrote to them (a warm cache), and marks them as written by this one.
func (r *Runners) writeVolumes(ctx context.Context, pod *corev1.Pod) error {
	claims := r.Kube.CoreV1().PersistentVolumeClaims(pod.Namespace)
	mounted, used := 0, 0
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		claim, err := claims.Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read claim %s: %w", v.PersistentVolumeClaim.ClaimName, err)
		}
		mounted++
		if claim.Annotations[UsedVolumeAnnotation] != "" {
			used++
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, UsedVolumeAnnotation, pod.Name)
		if _, err := claims.Patch(ctx, claim.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("write claim %s: %w", claim.Name, err)
		}
	}
	if mounted > 0 {
		r.mu.Lock()
		r.volumeStarts++
		if used == mounted {
			r.onUsedVolumes++
		}
		r.mu.Unlock()
	}
	return nil
}

// VolumeReuse counts the runners that started with claims, and of them those
// that found every claim written by an earlier runner.
func (r *Runners) VolumeReuse() (started, onUsedVolumes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.volumeStarts, r.onUsedVolumes
}
