package worker

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/internal/hraspec"
	"github.com/arcflow/arcflow/workflows"
)

// templateHash is a short FNV-32a hash of a runner template. Any change to what a
// runner is built from changes it, and a changed hash rolls the pool.
func templateHash(parts ...any) (string, error) {
	h := fnv.New32a()
	for _, p := range parts {
		data, err := json.Marshal(p)
		if err != nil {
			return "", fmt.Errorf("hash runner template: %w", err)
		}
		_, _ = h.Write(data)
	}
	return fmt.Sprintf("%08x", h.Sum32()), nil
}

// withJIT adds JIT registration to what a template hash covers, so turning it on
// or off rolls the pool, without changing the hash of a pool that never had it.
func withJIT(jit bool, parts ...any) []any {
	if jit {
		parts = append(parts, "jit-config")
	}
	return parts
}

func owner(kind string, meta metav1.ObjectMeta) *metav1.OwnerReference {
	return &metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: meta.Name, UID: meta.UID, Controller: ptr.To(true),
	}
}

// RunnerDeploymentPoolSpec builds the pool spec of a RunnerDeployment.
func RunnerDeploymentPoolSpec(rd *v1alpha1.RunnerDeployment, runnerURL string) (workflows.PoolSpec, error) {
	tpl := rd.Spec.Template
	jit, err := v1alpha1.JITConfig(rd.Annotations, tpl.Spec.IsEphemeral())
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	reruns, err := v1alpha1.RerunLostJobs(rd.Annotations)
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	hash, err := templateHash(withJIT(jit, tpl.Spec, tpl.Labels, tpl.Annotations)...)
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	return withScaleSet(rd.Annotations, workflows.PoolSpec{
		Namespace: rd.Namespace, Kind: v1alpha1.KindRunnerDeployment, Name: rd.Name, Generation: rd.Generation,
		Replicas: rd.Spec.DesiredReplicas(), Ephemeral: tpl.Spec.IsEphemeral(), Scope: hraspec.ScopeOf(rd.Namespace, tpl.Spec.RunnerConfig),
		TemplateHash: hash, RerunLostJobs: reruns,
		Runner: activities.RunnerPodInput{
			Owner: owner(v1alpha1.KindRunnerDeployment, rd.ObjectMeta), Labels: tpl.Labels, Annotations: tpl.Annotations,
			Spec: tpl.Spec, GitHubURL: runnerURL, JIT: jit,
		},
	})
}

// RunnerSetPoolSpec builds the pool spec of a RunnerSet.
func RunnerSetPoolSpec(rs *v1alpha1.RunnerSet, runnerURL string) (workflows.PoolSpec, error) {
	sts := rs.Spec.StatefulSetSpec
	sts.Replicas = nil // scaling is the pool's business, not the template's
	jit, err := v1alpha1.JITConfig(rs.Annotations, rs.Spec.IsEphemeral())
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	reruns, err := v1alpha1.RerunLostJobs(rs.Annotations)
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	hash, err := templateHash(withJIT(jit, rs.Spec.RunnerConfig, rs.Spec.ServiceAccountName, rs.Spec.WorkVolumeClaimTemplate, sts.Template, sts.VolumeClaimTemplates, sts.ServiceName)...)
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	volumeHash := ""
	if len(sts.VolumeClaimTemplates) > 0 {
		// Claims are named after it, so changed templates start fresh volumes.
		if volumeHash, err = templateHash(sts.VolumeClaimTemplates); err != nil {
			return workflows.PoolSpec{}, err
		}
	}
	return withScaleSet(rs.Annotations, workflows.PoolSpec{
		VolumeHash: volumeHash,
		Namespace:  rs.Namespace, Kind: v1alpha1.KindRunnerSet, Name: rs.Name, Generation: rs.Generation,
		Replicas: rs.Spec.DesiredReplicas(), Ephemeral: rs.Spec.IsEphemeral(), Scope: hraspec.ScopeOf(rs.Namespace, rs.Spec.RunnerConfig),
		TemplateHash: hash, RerunLostJobs: reruns,
		Runner: activities.RunnerPodInput{
			Owner: owner(v1alpha1.KindRunnerSet, rs.ObjectMeta), Labels: sts.Template.Labels, Annotations: sts.Template.Annotations,
			Spec: activities.RunnerSetPodSpec(&rs.Spec), GitHubURL: runnerURL, StatefulSet: &sts, JIT: jit,
		},
	})
}

// withScaleSet joins the pool's runners to the runner scale set its
// annotations name (v1alpha1.ScaleSetAnnotation): JIT runners of the set, and
// a template hash that rolls the pool when the set changes.
func withScaleSet(annotations map[string]string, spec workflows.PoolSpec) (workflows.PoolSpec, error) {
	ref, ok, err := v1alpha1.ScaleSetOf(annotations, spec.Ephemeral)
	if err != nil || !ok {
		return spec, err
	}
	hash, err := templateHash(spec.TemplateHash, ref)
	if err != nil {
		return workflows.PoolSpec{}, err
	}
	spec.ScaleSet, spec.Runner.JIT, spec.TemplateHash = &ref, true, hash
	return spec, nil
}
