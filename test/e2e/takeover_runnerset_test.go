package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/world"
)

// The ARC installation the RunnerSet takeover starts from: organization
// RunnerSet arc-cache, whose runners mount a cache claim, and six
// StatefulSets ARC's RunnerSet controller made for it.
const (
	arcSetName     = "arc-cache"
	arcSetOrg      = "takeover-org"
	arcSetHash     = "7c9f5d8b4"
	arcSetRunners  = 6
	arcSetMaxPods  = 8
	arcSetJobLabel = "arc-cache"
)

// arcSetStatefulSet is the i-th StatefulSet of ARC's RunnerSet, named as
// ARC's generateName (<runnerset>-) names them.
func arcSetStatefulSet(i int) string { return fmt.Sprintf("%s-x%04d", arcSetName, i) }

// arcSetRunner is the runner (and pod) of the i-th StatefulSet.
func arcSetRunner(i int) string { return arcSetStatefulSet(i) + "-0" }

// createARCStatefulSets creates what ARC's RunnerSet controller keeps for a
// RunnerSet: per runner a one-replica StatefulSet controlled by the RunnerSet,
// with the template hash label and sync-time annotation, a selector of ARC's
// labels (which the StatefulSet controller also puts on the claims it makes
// from the volumeClaimTemplates), and a pod template with ARC's runner
// environment. ARC's admission webhook would add RUNNER_NAME and RUNNER_TOKEN
// to each pod as it is created; with no such webhook here they are in the
// template, which is per runner anyway.
func createARCStatefulSets(t *testing.T, ctx context.Context, w *world.World, ns, class string, owner metav1.OwnerReference, token string) {
	selector := map[string]string{"app": arcSetName, activities.LabelTemplateHash: arcSetHash, activities.LabelRunnerSet: arcSetName,
		"actions-runner-controller/inject-registration-token": "true"}
	podLabels := map[string]string{activities.LabelRunner: ""}
	for k, v := range selector {
		podLabels[k] = v
	}
	one := int32(1)
	for i := range arcSetRunners {
		name := arcSetStatefulSet(i)
		env := []corev1.EnvVar{
			{Name: "RUNNER_ORG", Value: arcSetOrg}, {Name: "RUNNER_REPO"}, {Name: "RUNNER_ENTERPRISE"},
			{Name: "RUNNER_LABELS", Value: "linux," + arcSetJobLabel}, {Name: "RUNNER_GROUP"}, {Name: "RUNNER_EPHEMERAL", Value: "true"},
			{Name: "GITHUB_URL", Value: w.GitHub.URL + "/"}, {Name: "RUNNER_NAME", Value: name + "-0"}, {Name: "RUNNER_TOKEN", Value: token},
		}
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{activities.LabelTemplateHash: arcSetHash},
				Annotations:     map[string]string{"sync-time": time.Now().UTC().Format(time.RFC3339)},
				OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: appsv1.StatefulSetSpec{
				Replicas: &one, ServiceName: arcSetName,
				Selector: &metav1.LabelSelector{MatchLabels: selector},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					Containers: []corev1.Container{{Name: "runner", Image: "summerwind/actions-runner:latest", Env: env,
						VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/var/lib/docker"}}}},
				}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "cache"}, Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}}},
			},
		}
		_, err := w.Kube.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// createARCLeftClaims creates the claims of two StatefulSets ARC already
// deleted (their runners done), as the StatefulSet controller made them and
// ARC labelled them: one of the RunnerSet's template, written to by its
// runner, and one of an older template (2Gi). It returns their names.
func createARCLeftClaims(t *testing.T, ctx context.Context, w *world.World, ns, class string) (matching, older string) {
	for i, size := range map[int]string{98: "2Gi", 99: "1Gi"} {
		sts := arcSetStatefulSet(i)
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "cache-" + sts + "-0", Labels: map[string]string{"app": arcSetName,
				activities.LabelTemplateHash: arcSetHash, activities.LabelRunnerSet: arcSetName,
				"actions-runner-controller/inject-registration-token": "true", activities.ARCRunnerStatefulSetLabel: sts},
				Annotations: map[string]string{sim.UsedVolumeAnnotation: sts + "-0"}},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		}
		_, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return "cache-" + arcSetStatefulSet(99) + "-0", "cache-" + arcSetStatefulSet(98) + "-0"
}

// arcSetLeft lists what of ARC's RunnerSet is left: its StatefulSets, pods
// with ARC's finalizers, and its runners in GitHub.
func arcSetLeft(ctx context.Context, w *world.World, ns string) []string {
	var left []string
	sets, _ := w.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "!" + activities.LabelPool})
	for _, s := range sets.Items {
		left = append(left, "StatefulSet "+s.Name)
	}
	return append(left, arcRunnersLeft(ctx, w, ns, arcNames(arcSetRunners, arcSetRunner))...)
}

// arcflow takes over a live ARC RunnerSet: six per-runner StatefulSets of
// ARC's with a cache claim each, three running jobs, the claims of two
// StatefulSets ARC already deleted (one of an older template), and ARC's
// three capacity reservations. Within 30 s of the Lease's expiry it adopts
// the six, removes the three idle ones (from GitHub first) and their
// StatefulSets, deletes the claim of the older template, lets the busy ones
// finish, and runs four new jobs on the claims ARC's idle runners and its
// deleted StatefulSet left, making no claim; it never has more than
// maxReplicas runner pods and leaves nothing of ARC's but its claims, which
// are the RunnerSet's now and go with it.
func TestTakeOverALiveARCRunnerSetReusingItsClaims(t *testing.T) {
	parallel(t)
	takeOverRunnerSet(t, "takeover-runnerset", false)
}

// The same with the worker SIGKILLed just as it starts acting, in the middle
// of adopting the runners and claims: the restarted worker finishes it.
func TestTakeOverARunnerSetSurvivesAWorkerKilledMidway(t *testing.T) {
	parallel(t)
	takeOverRunnerSet(t, "takeover-runnerset-killed", true)
}

func takeOverRunnerSet(t *testing.T, ns string, killWorker bool) {
	arcNamespace := ns + "-arc-system"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	stopLease := heldARCLease(t, ctx, arcNamespace, "actions-runner-controller")
	holdARCJobs, releaseARCJobs := arcJobsHeld()
	w := startSimWorld(t, ctx, world.Config{
		Namespace: ns, Orgs: []string{arcSetOrg}, RegisterDelay: 200 * time.Millisecond, Seed: 23,
		JobDuration: 3 * time.Second, JobHold: holdARCJobs,
		Env: []string{"ARCFLOW_ARC_CONTROLLER_LEASE=" + arcNamespace + "/actions-runner-controller"},
	})
	class := "e2e-" + ns // the volumes offered are the test's own
	removeVolumes, err := world.OfferVolumes(ctx, w.Kube, class, arcSetMaxPods)
	t.Cleanup(func() { _ = removeVolumes() })
	require.NoError(t, err)

	// ARC's state: the RunnerSet, its StatefulSets' runners registered, three busy.
	rsYAML, _, _ := strings.Cut(world.CachedRunnerSet(arcSetName, arcSetOrg, class, arcSetMaxPods), "---\n")
	require.NoError(t, w.Apply(ctx, rsYAML))
	dyn, err := dynamic.NewForConfig(stack.RESTConfig)
	require.NoError(t, err)
	rs, err := dyn.Resource(v1alpha1.RunnerSetResource).Namespace(ns).Get(ctx, arcSetName, metav1.GetOptions{})
	require.NoError(t, err)
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindRunnerSet, Name: arcSetName, UID: rs.GetUID(),
		Controller: ptrTrue(), BlockOwnerDeletion: ptrTrue()}
	createARCStatefulSets(t, ctx, w, ns, class, owner, registrationToken(t, w.GitHub, "orgs/"+arcSetOrg))
	arcRunner, arc := arcSetRunner, arcNames(arcSetRunners, arcSetRunner)
	require.Eventually(t, func() bool {
		n := 0
		for i := range arcSetRunners {
			if _, ok := w.GitHub.Runner(arcRunner(i)); ok {
				n++
			}
		}
		return n == arcSetRunners
	}, 60*time.Second, 200*time.Millisecond, "ARC's runners registered")
	arcClaims := map[string]types.UID{}
	for i := range arcSetRunners { // ARC's runner pod controller: its finalizer and the GitHub ID; its RunnerSet controller: the claim's label
		r, _ := w.GitHub.Runner(arcRunner(i))
		patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q],"annotations":{%q:%q}}}`, activities.ARCPodFinalizer, activities.ARCRunnerIDAnnotation, strconv.FormatInt(r.ID, 10))
		_, err := w.Kube.CoreV1().Pods(ns).Patch(ctx, arcRunner(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, activities.ARCRunnerStatefulSetLabel, arcSetStatefulSet(i))
		claim, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "cache-"+arcRunner(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
		arcClaims[claim.Name] = claim.UID
	}
	leftClaim, olderClaim := createARCLeftClaims(t, ctx, w, ns, class)
	claim, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, leftClaim, metav1.GetOptions{})
	require.NoError(t, err)
	arcClaims[leftClaim] = claim.UID
	expiry, acting, peak := handOver(t, ctx, w, handover{ns: ns, resource: "runnerset", kind: v1alpha1.KindRunnerSet, name: arcSetName,
		arc: arc, repo: arcSetOrg + "/app", label: arcSetJobLabel, stopLease: stopLease, killWorker: killWorker, arcNamespace: arcNamespace})
	busyARC := func() int { return busyARCRunners(w, arc) }
	// On failure the last look says which part did not hold.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		left := arcSetLeft(ctx, w, ns)
		sets := slices.DeleteFunc(slices.Clone(left), func(s string) bool { return !strings.HasPrefix(s, "StatefulSet ") })
		assert.Len(c, sets, 3, "ARC's StatefulSets left: %v", left)
		free, err := stack.JSONPath(ctx, ns, "runnerset", arcSetName, "{.status.volumesFree}")
		assert.NoError(c, err)
		assert.Equal(c, "4", free, "the RunnerSet's volumesFree")
	}, 60*time.Second, 200*time.Millisecond, "ARC's idle runners are removed, with their StatefulSets, and their claims are free slots beside the one ARC left free")
	require.Eventually(t, func() bool {
		_, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, olderClaim, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 200*time.Millisecond, "the claim of an older template is deleted")
	for _, r := range w.GitHub.Runners() {
		require.False(t, arc[r.Name] && !r.Busy, "idle runner %s left in GitHub", r.Name)
	}
	require.Equal(t, 3, busyARC(), "ARC's busy runners keep their jobs")

	finishTakeover(t, w, arcSetOrg+"/app", arcSetJobLabel, releaseARCJobs, func() []string { return arcSetLeft(ctx, w, ns) })
	livePeak := peak()

	// ARC's claims are the RunnerSet's volume slots now: still there, the
	// same objects, and mounted by arcflow's runners.
	reused, writers := 0, map[string]string{}
	for name, uid := range arcClaims {
		claim, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err, "ARC's claim %s is kept", name)
		require.Equal(t, uid, claim.UID)
		require.Equal(t, arcSetName, claim.Labels[activities.LabelPool])
		require.Empty(t, claim.Labels[activities.ARCRunnerStatefulSetLabel], "ARC's claim controller would delete it")
		writer := claim.Annotations[sim.UsedVolumeAnnotation]
		writers[name] = writer
		if writer != strings.TrimPrefix(name, "cache-") { // ARC's runner of the claim's StatefulSet wrote it last
			reused++
		}
	}
	require.Equal(t, 4, reused, "arcflow's four runners mounted the claims ARC's idle runners and its deleted StatefulSet left; last writer by claim %v", writers)
	claims, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, claims.Items, len(arcClaims), "no claim made: ARC's sufficed")
	require.Empty(t, w.Runners.Violations(), "no job interrupted")
	require.LessOrEqual(t, livePeak, arcSetMaxPods, "live runner pods never above maxReplicas")

	out, err := userEdit(ctx, ns, "runnerset", arcSetName)
	require.NoError(t, err, "the user's edit is accepted: %s", out)
	failed := failedWorkflows(t, ctx, ns)
	require.Empty(t, failed, "no workflow failed")

	out, err = stack.Kubectl(ctx, "delete", "-n", ns, "hra,runnerset", "--all")
	require.NoError(t, err, out)
	require.Eventually(t, func() bool {
		list, err := w.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	}, 30*time.Second, 200*time.Millisecond, "ARC's claims go with the RunnerSet, as its own slots do")
	t.Logf("RunnerSet takeover (worker killed midway: %v): Lease expired %v after its last renewal; arcflow accepted the RunnerSet %v after ARC's webhooks were removed; failed workflows %d; live runner pods at peak %d; %d pods created by arcflow for 4 new jobs; %d of ARC's %d claims mounted again by arcflow's runners, %d claims at the end; jobs interrupted %d",
		killWorker, arcLeaseSeconds*time.Second, acting.Sub(expiry).Round(100*time.Millisecond), len(failed), livePeak, len(w.Runners.PodTimes())-arcSetRunners,
		reused, len(arcClaims), len(claims.Items), w.Runners.Interrupted())
}
