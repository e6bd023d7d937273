package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

func cacheTemplate(size string) corev1.PersistentVolumeClaim {
	class := "fast"
	return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "cache"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
	}}
}

// arcStatefulSet is a StatefulSet as ARC's RunnerSet controller makes it.
func arcStatefulSet(name, runnerSet string, static bool) *appsv1.StatefulSet {
	env := []corev1.EnvVar{{Name: "RUNNER_EPHEMERAL", Value: "true"}}
	if static {
		env[0].Value = "false"
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci", Labels: map[string]string{LabelTemplateHash: "abc"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindRunnerSet, Name: runnerSet, UID: "rs-uid", Controller: ptrTo(true)}}},
		Spec: appsv1.StatefulSetSpec{
			Template:             corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "runner", Env: env}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{cacheTemplate("1Gi")},
		},
	}
}

func arcClaim(name, sts, size string) *corev1.PersistentVolumeClaim {
	c := cacheTemplate(size)
	c.Name, c.Namespace = name, "ci"
	c.Labels = map[string]string{LabelRunnerSet: "app", LabelTemplateHash: "abc", ARCRunnerStatefulSetLabel: sts}
	return &c
}

func ptrTo[T any](v T) *T { return &v }

// ARC's StatefulSets of a RunnerSet are found with their pods and claims;
// arcflow's own, another RunnerSet's and their claims are not; claims of
// StatefulSets ARC already deleted come grouped by StatefulSet, matching the
// templates or not.
func TestARCRunnerSetFindsARCsStatefulSetsPodsAndClaims(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-aaaaa-0", Namespace: "ci", UID: "pod-uid",
		Labels:          map[string]string{LabelRunner: "", LabelRunnerSet: "app"},
		Annotations:     map[string]string{ARCRunnerIDAnnotation: "7"},
		Finalizers:      []string{ARCPodFinalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "app-aaaaa", Controller: ptrTo(true)}}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "runner"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	orphan := pod.DeepCopy() // its StatefulSet is gone; ARC's finalizer holds it
	orphan.Name, orphan.UID, orphan.OwnerReferences[0].Name = "app-eeeee-0", "orphan-uid", "app-eeeee"
	orphan.Spec.Volumes = []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "cache-app-eeeee-0"}}}}
	ours := arcStatefulSet("app-ours", "app", false)
	ours.Labels[LabelPool] = "app"
	other := arcClaim("cache-other-xxxxx-0", "other-xxxxx", "1Gi")
	other.Labels[LabelRunnerSet] = "other"
	k := &Kubernetes{Client: k8sfake.NewClientset(
		arcStatefulSet("app-aaaaa", "app", false), arcStatefulSet("app-bbbbb", "app", true), ours, arcStatefulSet("other-xxxxx", "other", false),
		pod, orphan,
		arcClaim("cache-app-aaaaa-0", "app-aaaaa", "1Gi"), arcClaim("cache-app-eeeee-0", "app-eeeee", "1Gi"),
		arcClaim("cache-app-ccccc-0", "app-ccccc", "1Gi"), arcClaim("cache-app-ddddd-0", "", "5Gi"), other,
	)}
	got, err := k.ARCRunnerSet(context.Background(), ARCRunnerSetInput{Namespace: "ci", Name: "app", Templates: []corev1.PersistentVolumeClaim{cacheTemplate("1Gi")}})
	require.NoError(t, err)
	require.Len(t, got.Runners, 3)
	a, b, e := got.Runners[0], got.Runners[1], got.Runners[2]
	require.Equal(t, "app-aaaaa-0", a.Name)
	require.True(t, a.Ephemeral)
	require.Equal(t, int64(7), a.RunnerID)
	require.Equal(t, PodState{UID: "pod-uid", Exists: true, Phase: corev1.PodRunning}, a.Pod)
	require.Equal(t, &ARCClaimSet{StatefulSet: "app-aaaaa", Claims: map[string]string{"cache": "cache-app-aaaaa-0"}, Match: true}, a.Claims)
	require.Equal(t, "app-bbbbb-0", b.Name, "a StatefulSet whose pod is not there yet")
	require.False(t, b.Ephemeral)
	require.False(t, b.Pod.Exists)
	require.Nil(t, b.Claims)
	require.Equal(t, "app-eeeee-0", e.Name)
	require.Equal(t, &ARCClaimSet{StatefulSet: "app-eeeee", Claims: map[string]string{"cache": "cache-app-eeeee-0"}, Match: true}, e.Claims)
	require.Equal(t, []ARCClaimSet{
		{StatefulSet: "app-ccccc", Claims: map[string]string{"cache": "cache-app-ccccc-0"}, Match: true},
		{StatefulSet: "app-ddddd", Claims: map[string]string{"cache": "cache-app-ddddd-0"}, Match: false},
	}, got.Claims)
}

// Relabelling makes a claim of ARC's the slot's: arcflow's labels, the
// RunnerSet as owner instead of a StatefulSet, ARC's label gone.
func TestAdoptARCClaimsRelabelsThemAsTheSlots(t *testing.T) {
	claim := arcClaim("cache-app-aaaaa-0", "app-aaaaa", "1Gi")
	claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "app-aaaaa", UID: "sts-uid"}}
	kube := k8sfake.NewClientset(claim)
	k := &Kubernetes{Client: kube}
	owner := &metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindRunnerSet, Name: "app", UID: types.UID("rs-uid"), Controller: ptrTo(true)}
	slots := []VolumeSlotRef{{Index: 2, Hash: "v1", Claims: map[string]string{"cache": "cache-app-aaaaa-0", "gone": "gone-app-aaaaa-0"}}}
	require.NoError(t, k.AdoptARCClaims(context.Background(), AdoptARCClaimsInput{Namespace: "ci", Pool: "app", Owner: owner, Slots: slots}))
	got, err := kube.CoreV1().PersistentVolumeClaims("ci").Get(context.Background(), "cache-app-aaaaa-0", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{LabelRunnerSet: "app", LabelTemplateHash: "abc", LabelPool: "app", LabelVolumeSlot: "2", LabelVolumeHash: "v1"}, got.Labels)
	require.Equal(t, []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindRunnerSet, Name: "app", UID: "rs-uid"}}, got.OwnerReferences)
	require.Equal(t, "cache-app-aaaaa-0", SlotClaimName("cache", "app", slots[0]), "the slot mounts it by its own name")
}

func TestClaimMatchesTemplateComparesWhatTheVolumeIsMadeOf(t *testing.T) {
	tpl := cacheTemplate("1Gi")
	require.True(t, ClaimMatchesTemplate(arcClaim("c", "s", "1Gi").Spec, tpl.Spec))
	require.False(t, ClaimMatchesTemplate(arcClaim("c", "s", "2Gi").Spec, tpl.Spec), "another size")
	rwx := arcClaim("c", "s", "1Gi")
	rwx.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	require.False(t, ClaimMatchesTemplate(rwx.Spec, tpl.Spec), "another access mode")
	other := arcClaim("c", "s", "1Gi")
	other.Spec.StorageClassName = ptrTo("slow")
	require.False(t, ClaimMatchesTemplate(other.Spec, tpl.Spec), "another class")
	tpl.Spec.StorageClassName = nil
	require.True(t, ClaimMatchesTemplate(other.Spec, tpl.Spec), "a template without a class took the default one")
}
