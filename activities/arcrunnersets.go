package activities

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// ARC's RunnerSet makes one StatefulSet per runner (generateName
// <runnerset>-, one replica, controlled by the RunnerSet), whose pod
// <statefulset>-0 is the runner and whose claims, <template>-<statefulset>-0,
// carry the StatefulSet's selector labels (runnerset-name among them) and
// ARC's runner-statefulset-name. ARC leaves the claims behind when it deletes
// a StatefulSet (retention policy Retain) and recycles their volumes itself;
// arcflow takes them over as its pool's volume slots instead
// (workflows/pool_adopt_runnerset.go).

// ARCRunnerStatefulSetLabel is what ARC puts on the claims of its runners'
// StatefulSets; ARC's claim controller deletes a labelled claim whose
// StatefulSet is gone, so arcflow removes it from the claims it keeps.
const ARCRunnerStatefulSetLabel = "runner-statefulset-name"

// ARCRunnerSet lists the runners ARC's RunnerSet controller left for a
// RunnerSet: its StatefulSets (controlled by the RunnerSet, without arcflow's
// pool label) with their pods, pods whose StatefulSet is already gone (held by
// ARC's finalizer), and every claim of theirs. A cluster where ARC never ran
// has none of them, and nothing is adopted.
func (k *Kubernetes) ARCRunnerSet(ctx context.Context, in ARCRunnerSetInput) (ARCRunnerSetRunners, error) {
	var out ARCRunnerSetRunners
	if k.Client == nil {
		return out, nil
	}
	notOurs := fmt.Sprintf("%s=%s,!%s", LabelRunnerSet, in.Name, LabelPool)
	sets, err := k.Client.AppsV1().StatefulSets(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "!" + LabelPool})
	if err != nil {
		return out, fmt.Errorf("list ARC statefulsets of %s/%s: %w", in.Namespace, in.Name, err)
	}
	pods, err := k.Client.CoreV1().Pods(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: notOurs})
	if err != nil {
		return out, fmt.Errorf("list ARC runner pods of %s/%s: %w", in.Namespace, in.Name, err)
	}
	claims, err := k.Client.CoreV1().PersistentVolumeClaims(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: notOurs})
	if err != nil {
		return out, fmt.Errorf("list ARC claims of %s/%s: %w", in.Namespace, in.Name, err)
	}
	claimByName := map[string]*corev1.PersistentVolumeClaim{}
	for i := range claims.Items {
		claimByName[claims.Items[i].Name] = &claims.Items[i]
	}
	podByName := map[string]*corev1.Pod{}
	for i := range pods.Items {
		podByName[pods.Items[i].Name] = &pods.Items[i]
	}
	taken := map[string]bool{}
	// collect makes a claim set of the named claims that exist.
	collect := func(sts string, names map[string]string) *ARCClaimSet {
		set := ARCClaimSet{StatefulSet: sts, Claims: map[string]string{}}
		for template, name := range names {
			if claimByName[name] != nil && !taken[name] {
				set.Claims[template], taken[name] = name, true
			}
		}
		if len(set.Claims) == 0 {
			return nil
		}
		set.Match = claimsMatch(set.Claims, claimByName, in.Templates)
		return &set
	}
	for _, sts := range sets.Items {
		if owner := metav1.GetControllerOf(&sts); owner == nil || owner.Kind != v1alpha1.KindRunnerSet || owner.Name != in.Name {
			continue
		}
		name := sts.Name + "-0"
		r := arcRunnerOf(name, podByName[name], &sts.Spec.Template.Spec)
		names := map[string]string{}
		for _, t := range sts.Spec.VolumeClaimTemplates {
			names[t.Name] = t.Name + "-" + name
		}
		r.Claims = collect(sts.Name, names)
		delete(podByName, name)
		out.Runners = append(out.Runners, r)
	}
	for name, pod := range podByName { // their StatefulSet is gone
		if owner := metav1.GetControllerOf(pod); owner == nil || owner.Kind != "StatefulSet" {
			continue
		}
		r := arcRunnerOf(name, pod, &pod.Spec)
		r.Claims = collect(StatefulSetName(name), podClaims(pod))
		out.Runners = append(out.Runners, r)
	}
	out.Claims = leftClaims(claims.Items, taken, claimByName, in.Templates)
	sort.Slice(out.Runners, func(i, j int) bool { return out.Runners[i].Name < out.Runners[j].Name })
	return out, nil
}

// arcRunnerOf is one of ARC's RunnerSet runners: ephemeral unless its runner
// container says RUNNER_EPHEMERAL=false, with the GitHub ID ARC annotated.
func arcRunnerOf(name string, pod *corev1.Pod, spec *corev1.PodSpec) ARCRunner {
	r := ARCRunner{Name: name, Ephemeral: true}
	if pod != nil {
		r.Pod, spec = PodStateOf(pod), &pod.Spec
		r.RunnerID, _ = strconv.ParseInt(pod.Annotations[ARCRunnerIDAnnotation], 10, 64)
	}
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if c.Name == calls.RunnerContainerName && e.Name == "RUNNER_EPHEMERAL" && e.Value == "false" {
				r.Ephemeral = false
			}
		}
	}
	return r
}

// podClaims are the claims a pod mounts, by volume name (which a
// StatefulSet's pod gives its template's name).
func podClaims(pod *corev1.Pod) map[string]string {
	names := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			names[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	return names
}

// leftClaims groups the claims no runner holds by the StatefulSet ARC made
// them for: its label, or the name <template>-<statefulset>-0 for a template
// of the RunnerSet. A claim of neither is a set of its own, matching nothing.
func leftClaims(all []corev1.PersistentVolumeClaim, taken map[string]bool, byName map[string]*corev1.PersistentVolumeClaim, templates []corev1.PersistentVolumeClaim) []ARCClaimSet {
	groups := map[string]map[string]string{}
	for _, c := range all {
		if taken[c.Name] {
			continue
		}
		sts, template := c.Labels[ARCRunnerStatefulSetLabel], ""
		for _, t := range templates {
			prefix := t.Name + "-"
			if strings.HasPrefix(c.Name, prefix) && strings.HasSuffix(c.Name, "-0") &&
				(sts == "" || c.Name == prefix+sts+"-0") {
				sts, template = strings.TrimSuffix(strings.TrimPrefix(c.Name, prefix), "-0"), t.Name
			}
		}
		if sts == "" || template == "" {
			sts, template = c.Name, c.Name
		}
		if groups[sts] == nil {
			groups[sts] = map[string]string{}
		}
		groups[sts][template] = c.Name
	}
	var out []ARCClaimSet
	for sts, names := range groups {
		out = append(out, ARCClaimSet{StatefulSet: sts, Claims: names, Match: claimsMatch(names, byName, templates)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StatefulSet < out[j].StatefulSet })
	return out
}

// claimsMatch: exactly one claim per template, each as the template asks.
func claimsMatch(names map[string]string, byName map[string]*corev1.PersistentVolumeClaim, templates []corev1.PersistentVolumeClaim) bool {
	if len(templates) == 0 || len(names) != len(templates) {
		return false
	}
	for _, t := range templates {
		c := byName[names[t.Name]]
		if c == nil || !ClaimMatchesTemplate(c.Spec, t.Spec) {
			return false
		}
	}
	return true
}

// ClaimMatchesTemplate compares what a runner's volume is made of: the
// storage class (a template without one takes the default class, so any),
// access modes, volume mode and requested size. The claim's binding, labels
// and annotations do not matter.
func ClaimMatchesTemplate(claim, template corev1.PersistentVolumeClaimSpec) bool {
	if template.StorageClassName != nil && (claim.StorageClassName == nil || *claim.StorageClassName != *template.StorageClassName) {
		return false
	}
	mode := func(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
		if m == nil {
			return corev1.PersistentVolumeFilesystem
		}
		return *m
	}
	if mode(claim.VolumeMode) != mode(template.VolumeMode) || len(claim.AccessModes) != len(template.AccessModes) {
		return false
	}
	modes := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range claim.AccessModes {
		modes[m] = true
	}
	for _, m := range template.AccessModes {
		if !modes[m] {
			return false
		}
	}
	want, have := template.Resources.Requests[corev1.ResourceStorage], claim.Resources.Requests[corev1.ResourceStorage]
	return want.Cmp(have) == 0
}
