package world

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// CachedRunnerSet is an organization RunnerSet named name, scaled from 0 to
// maxReplicas by an HRA of the same name, whose runners mount a cache volume
// from volumeClaimTemplates of storage class class.
func CachedRunnerSet(name, org, class string, maxReplicas int) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerSet
metadata:
  name: %[1]s
spec:
  replicas: 0
  organization: %[2]s
  labels: [linux, %[1]s]
  selector:
    matchLabels:
      app: %[1]s
  serviceName: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: runner
        image: summerwind/actions-runner:latest
        volumeMounts:
        - name: cache
          mountPath: /var/lib/docker
  volumeClaimTemplates:
  - metadata:
      name: cache
    spec:
      storageClassName: %[3]s
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
`, name, org, class) + "---\n" + WebhookHRA(name, v1alpha1.KindRunnerSet, maxReplicas, 5)
}

// OfferVolumes creates n PersistentVolumes of storage class class for claims
// to bind to, as no provisioner runs on the local stack. The returned function
// deletes them.
func OfferVolumes(ctx context.Context, kube kubernetes.Interface, class string, n int) (func() error, error) {
	var names []string
	remove := func() error {
		var errs []error
		for _, name := range names {
			errs = append(errs, kube.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{}))
		}
		return errors.Join(errs...)
	}
	for i := range n {
		name := fmt.Sprintf("%s-%d", class, i)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName:              class,
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
			},
		}
		if _, err := kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return remove, fmt.Errorf("offer volume %s: %w", name, err)
		}
		names = append(names, name)
	}
	return remove, nil
}
