package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/localstack"
)

// restrictedNS enforces, and warns about, Pod Security "restricted".
const restrictedNS = "psa-restricted"

// testPodSecurityRestricted runs in TestManifestsApplyToTheAPIServer's API
// server: every arcflow pod that the chart (at its defaults, with every
// option, and with an external Temporal over mTLS and extra volumes) and the
// kustomize base render is admitted in a namespace that enforces Pod
// Security "restricted". Admission checks Pods; a Deployment or StatefulSet
// is admitted whatever its template (Pod Security only warns on it), so each
// pod template is tried as a Pod, and the workloads themselves must draw no
// warning. A runner pod with Docker, which is privileged and not arcflow's
// own, is refused there: the namespace does enforce.
func testPodSecurityRestricted(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + restrictedNS + "\n  labels:\n" +
		"    pod-security.kubernetes.io/enforce: restricted\n    pod-security.kubernetes.io/warn: restricted\n"
	out, err := stack.Kubectl(ctx, "apply", "-f", writeManifest(t, []byte(ns)))
	require.NoError(t, err, out)
	dryRun := func(t *testing.T, manifest []byte) (string, error) {
		return stack.Kubectl(ctx, "apply", "--server-side", "--dry-run=server", "--validate=strict", "-f", writeManifest(t, manifest))
	}
	for name, manifest := range map[string][]byte{
		"chart defaults":   helmTemplate(t),
		"chart everything": helmTemplate(t, everythingOn...),
		"chart with mTLS and extra volumes": helmTemplate(t, "--set", "temporal.address="+externalTemporal,
			"--set", "temporal.tls.secretName=temporal-client-tls", "--set", "temporal.tls.ca.configMapName=temporal-ca",
			"--set", "temporal.apiKeySecretName=temporal-api-key",
			"--set", "additionalVolumes[0].name=ghes-ca", "--set", "additionalVolumes[0].configMap.name=ghes-ca",
			"--set", "additionalVolumeMounts[0].name=ghes-ca", "--set", "additionalVolumeMounts[0].mountPath=/etc/ssl/ghes"),
		"kustomize base": kustomizeBuild(t, overlay(t)),
	} {
		t.Run(name, func(t *testing.T) {
			workloads, pods := podTemplatesAsPods(t, objects(t, manifest))
			require.NotEmpty(t, pods)
			out, err := dryRun(t, pods)
			require.NoError(t, err, out)
			require.Equal(t, strings.Count(string(pods), "kind: Pod\n"), strings.Count(out, "(server dry run)"), out)
			require.NotContains(t, out, "PodSecurity", out)
			out, err = dryRun(t, workloads)
			require.NoError(t, err, out)
			require.NotContains(t, out, "PodSecurity", "the workloads draw no Pod Security warning")
		})
	}
	t.Run("a runner pod with Docker is refused", func(t *testing.T) {
		pod := activities.BuildRunnerPod(activities.RunnerPodInput{
			Namespace: restrictedNS, Name: "runners-x1", Pool: "runners", Kind: v1alpha1.KindRunnerDeployment,
			Spec: v1alpha1.RunnerSpec{RunnerConfig: v1alpha1.RunnerConfig{Repository: "o/r"}}, GitHubURL: "https://github.com/",
		}, activities.DefaultPodDefaults())
		pod.APIVersion, pod.Kind = "v1", "Pod"
		manifest, err := yaml.Marshal(pod)
		require.NoError(t, err)
		out, err := dryRun(t, manifest)
		require.Error(t, err, out)
		require.Contains(t, out, `violates PodSecurity "restricted:latest"`)
	})
}

// podTemplatesAsPods returns the Deployments and StatefulSets of a render,
// moved into restrictedNS, and a Pod of each one's template there. A
// StatefulSet's claim templates become claims the Pod names.
func podTemplatesAsPods(t *testing.T, objs []*unstructured.Unstructured) (workloads, pods []byte) {
	t.Helper()
	var ws, ps []string
	for _, o := range objs {
		if o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet" {
			continue
		}
		o = o.DeepCopy()
		o.SetNamespace(restrictedNS)
		w, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		ws = append(ws, string(w))

		spec, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		claims, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates")
		for _, c := range claims {
			claim := c.(map[string]any)["metadata"].(map[string]any)["name"].(string)
			vols, _ := spec["volumes"].([]any)
			spec["volumes"] = append(vols, map[string]any{
				"name": claim, "persistentVolumeClaim": map[string]any{"claimName": claim + "-" + o.GetName() + "-0"},
			})
		}
		p, err := yaml.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": strings.ToLower(o.GetKind()) + "-" + o.GetName(), "namespace": restrictedNS, "labels": labels},
			"spec":     spec,
		})
		require.NoError(t, err)
		ps = append(ps, string(p))
	}
	return []byte(strings.Join(ws, "---\n")), []byte(strings.Join(ps, "---\n"))
}

func writeManifest(t *testing.T, manifest []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	require.NoError(t, os.WriteFile(path, manifest, 0o644))
	return path
}
