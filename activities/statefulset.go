package activities

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// LabelRunnerStatefulSet selects the pod of a runner's one-replica StatefulSet.
const LabelRunnerStatefulSet = "arcflow.dev/runner-statefulset"

// StatefulSetName is the StatefulSet of a RunnerSet runner, whose only pod (and so
// the runner) is named <statefulset>-0.
func StatefulSetName(runnerName string) string { return strings.TrimSuffix(runnerName, "-0") }

// RunnerSetPodSpec turns a RunnerSet's pod template into the runner pod fields, so
// both kinds share BuildRunnerPod.
func RunnerSetPodSpec(rs *v1alpha1.RunnerSetSpec) v1alpha1.RunnerSpec {
	t := rs.Template.Spec
	return v1alpha1.RunnerSpec{
		RunnerConfig: rs.RunnerConfig,
		RunnerPodSpec: v1alpha1.RunnerPodSpec{
			Containers: t.Containers, InitContainers: t.InitContainers, Volumes: t.Volumes,
			NodeSelector: t.NodeSelector, ServiceAccountName: firstNonEmpty(rs.ServiceAccountName, t.ServiceAccountName),
			AutomountServiceAccountToken: t.AutomountServiceAccountToken, SecurityContext: t.SecurityContext,
			ImagePullSecrets: t.ImagePullSecrets, Affinity: t.Affinity, Tolerations: t.Tolerations,
			PriorityClassName: t.PriorityClassName, TerminationGracePeriodSeconds: t.TerminationGracePeriodSeconds,
			HostAliases: t.HostAliases, TopologySpreadConstraints: t.TopologySpreadConstraints,
			RuntimeClassName: t.RuntimeClassName, DnsPolicy: t.DNSPolicy, DnsConfig: t.DNSConfig,
			EnableServiceLinks: t.EnableServiceLinks, WorkVolumeClaimTemplate: rs.WorkVolumeClaimTemplate,
		},
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// BuildRunnerStatefulSet wraps a runner pod into a one-replica StatefulSet with the
// RunnerSet's volumes: its pool's volume slot, or, for a runner without one, its own
// volumeClaimTemplates, whose claims go with it (retention policy Delete).
func BuildRunnerStatefulSet(in RunnerPodInput, defaults PodDefaults) *appsv1.StatefulSet {
	pod := BuildRunnerPod(in, defaults)
	name := StatefulSetName(in.Name)
	pod.Labels[LabelRunnerStatefulSet] = name
	// A StatefulSet's pods must restart Always; the runner workflow treats the runner
	// container's exit as the runner's end.
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	var claims []corev1.PersistentVolumeClaim
	serviceName := ""
	if in.StatefulSet != nil {
		claims, serviceName = in.StatefulSet.VolumeClaimTemplates, in.StatefulSet.ServiceName
		if in.VolumeSlot != nil {
			// The slot's claims, which outlive this StatefulSet, instead of its own.
			for _, t := range claims {
				pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: SlotClaimName(t.Name, in.Pool, *in.VolumeSlot)},
				}})
			}
			claims = nil
		}
		for k, v := range in.StatefulSet.Template.Labels {
			if _, taken := pod.Labels[k]; !taken {
				pod.Labels[k] = v
			}
		}
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: in.Namespace, Labels: map[string]string{LabelPool: in.Pool, LabelRunnerSet: in.Pool}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             ptr.To[int32](1),
			ServiceName:          serviceName,
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{LabelRunnerStatefulSet: name}},
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}, Spec: pod.Spec},
			VolumeClaimTemplates: claims,
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
		},
	}
	if in.Owner != nil {
		sts.OwnerReferences = []metav1.OwnerReference{*in.Owner}
	}
	return sts
}

// ensureRunnerStatefulSet is EnsureRunner for a RunnerSet runner.
func (k *Kubernetes) ensureRunnerStatefulSet(ctx context.Context, in RunnerPodInput) (RunnerPodOutput, error) {
	sets := k.Client.AppsV1().StatefulSets(in.Namespace)
	name := StatefulSetName(in.Name)
	poolToken := sharesPoolToken(in)
	if existing, err := sets.Get(ctx, name, metav1.GetOptions{}); err == nil {
		// One an earlier version made reads a Secret of its own.
		poolToken = poolToken && !readsSecret(&corev1.Pod{Spec: existing.Spec.Template.Spec}, TokenSecretName(in.Name))
		id, err := k.registeredRunnerID(ctx, in)
		return RunnerPodOutput{RunnerID: id, PoolToken: poolToken}, err
	} else if !apierrors.IsNotFound(err) {
		return RunnerPodOutput{}, fmt.Errorf("get runner statefulset %s/%s: %w", in.Namespace, name, err)
	}
	if err := k.ensureKubernetesModeAccount(ctx, in); err != nil {
		return RunnerPodOutput{}, err
	}
	if err := k.ensureSlotClaims(ctx, in); err != nil {
		return RunnerPodOutput{}, err
	}
	runnerID, err := k.writeCredential(ctx, in)
	if err != nil {
		return RunnerPodOutput{}, err
	}
	created, err := sets.Create(ctx, BuildRunnerStatefulSet(in, k.Defaults), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return RunnerPodOutput{RunnerID: runnerID, PoolToken: poolToken}, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		return RunnerPodOutput{}, invalidSpec("statefulset", in, err)
	case err != nil:
		return RunnerPodOutput{}, fmt.Errorf("create runner statefulset %s/%s: %w", in.Namespace, name, err)
	}
	out := RunnerPodOutput{Created: true, RunnerID: runnerID, PoolToken: poolToken}
	if poolToken {
		return out, nil
	}
	return out, k.adoptTokenSecret(ctx, in, "apps/v1", "StatefulSet", created.Name, string(created.UID))
}
