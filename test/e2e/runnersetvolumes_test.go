package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/internal/simworld"
)

// cachedRunnerSet is an organization RunnerSet of at most maxReplicas runners,
// each with a cache volume from volumeClaimTemplates.
func cachedRunnerSet(maxReplicas int) string {
	return fmt.Sprintf(`apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerSet
metadata:
  name: cached
spec:
  replicas: 0
  organization: octo-org
  labels: [linux, cached]
  selector:
    matchLabels:
      app: cached
  serviceName: cached
  template:
    metadata:
      labels:
        app: cached
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
      storageClassName: e2e-cache
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: cached
spec:
  scaleTargetRef:
    kind: RunnerSet
    name: cached
  minReplicas: 0
  maxReplicas: %d
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`, maxReplicas)
}

// offerVolumes creates n PersistentVolumes of a storage class for claims to bind
// to (no provisioner runs here), deleted when the test ends.
func offerVolumes(t *testing.T, ctx context.Context, w *simworld.World, class string, n int) {
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
		_, err := w.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		require.NoError(t, err)
		t.Cleanup(func() {
			_ = w.Kube.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
	}
}

// A RunnerSet's volumes outlive their runner: six jobs one after another at
// maxReplicas 2 never have more than two claims, every runner after the first
// two starts on a volume an earlier runner wrote to, and deleting the RunnerSet
// leaves no claim.
func TestRunnerSetVolumesAreReusedByTheNextRunner(t *testing.T) {
	const ns = "runnerset-volumes"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := startSimWorld(t, ctx, simworld.Config{
		Namespace: ns, Orgs: []string{"octo-org"}, RegisterDelay: 200 * time.Millisecond, JobDuration: time.Second, Seed: 1,
	})
	offerVolumes(t, ctx, w, "e2e-cache", 4)
	claims := func(ctx context.Context) int {
		list, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool + "=cached"})
		if err != nil {
			return -1 // counted as unknown: the sampler runs outside the test's goroutine
		}
		return len(list.Items)
	}
	var mu sync.Mutex
	peak := 0
	sampling, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // samples the claims every 50 ms while the jobs run
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling.Done():
				return
			case <-tick.C:
				n := claims(sampling)
				mu.Lock()
				peak = max(peak, n)
				mu.Unlock()
			}
		}
	}()
	require.NoError(t, w.Apply(ctx, cachedRunnerSet(2)))

	const jobs = 6
	for i := range jobs {
		w.Queue("octo-org/app", fmt.Sprintf("build-%d", i), []string{"self-hosted", "linux", "cached"})
		require.Eventually(t, func() bool {
			done := 0
			for _, j := range w.GitHub.Jobs() {
				if j.Status == "completed" {
					done++
				}
			}
			return done == i+1
		}, 60*time.Second, 100*time.Millisecond, "job %d ran", i)
	}
	started, onUsed := w.Runners.VolumeReuse()
	require.GreaterOrEqual(t, started, jobs, "every runner mounted its slot's claim")
	require.GreaterOrEqual(t, onUsed, started-2, "every runner after the first two started on a used volume")
	out, err := stack.Kubectl(ctx, "get", "runnerset", "-n", ns)
	require.NoError(t, err)
	t.Logf("kubectl get runnerset:\n%s", out)
	require.Contains(t, out, "VOLUMES-IN-USE")

	out, err = stack.Kubectl(ctx, "delete", "-n", ns, "hra,runnerset", "--all")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool { return claims(ctx) == 0 }, 60*time.Second, 200*time.Millisecond, "no claim left after the RunnerSet is deleted")
	stop()
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, peak, 2, "never more claims than maxReplicas")
	t.Logf("%d runners with volumes, %d of them on a used volume; at most %d claims at once", started, onUsed, peak)
}
