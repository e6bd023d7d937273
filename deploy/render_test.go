package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/arcflow/arcflow/sim/localstack"
)

const (
	chartDir     = "helm/arcflow"
	release      = "arcflow"
	releaseNS    = "arcflow-helm"
	kustomizeDir = "kustomize"
)

// everythingOn turns on every option of the chart's Ingress, monitoring and
// NetworkPolicy values, each with its sub-values set.
var everythingOn = []string{
	"--set", "githubWebhookServer.ingress.enabled=true",
	"--set", "githubWebhookServer.ingress.ingressClassName=nginx",
	"--set", "githubWebhookServer.ingress.annotations.cert-manager\\.io/cluster-issuer=letsencrypt",
	"--set", "githubWebhookServer.ingress.hosts[0].host=arcflow.example.org",
	"--set", "githubWebhookServer.ingress.hosts[1].host=hooks.example.org",
	"--set", "githubWebhookServer.ingress.hosts[1].paths[0].path=/",
	"--set", "githubWebhookServer.ingress.hosts[1].paths[0].pathType=Prefix",
	"--set", "githubWebhookServer.ingress.tls[0].secretName=arcflow-tls",
	"--set", "githubWebhookServer.ingress.tls[0].hosts[0]=arcflow.example.org",
	"--set", "metrics.serviceMonitor.enabled=true",
	"--set", "metrics.serviceMonitor.labels.release=kube-prometheus-stack",
	"--set", "metrics.serviceMonitor.interval=15s",
	"--set", "metrics.serviceMonitor.timeout=5s",
	"--set", "metrics.prometheusRule.enabled=true",
	"--set", "metrics.prometheusRule.labels.release=kube-prometheus-stack",
	"--set", "metrics.prometheusRule.alerts.ArcflowJobsWaitingLong.minutes=15",
	"--set", "grafana.dashboard.enabled=true",
	"--set", "networkPolicy.enabled=true",
	"--set", "networkPolicy.webhookExtraFrom[0].ipBlock.cidr=192.30.252.0/22",
}

// tool is a binary of make tools; the test is skipped without it under -short.
func tool(t *testing.T, name string) string {
	t.Helper()
	dir, err := localstack.ToolsDir()
	if err == nil {
		path := filepath.Join(dir, name)
		if _, err = os.Stat(path); err == nil {
			return path
		}
	}
	if testing.Short() {
		t.Skipf("%s: %v (run make tools)", name, err)
	}
	require.NoError(t, err, "run make tools")
	return ""
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, tool(t, name), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s %v: %s", name, args, stderr.String())
	return out
}

// helmTemplate renders the chart as release arcflow in namespace arcflow-helm.
func helmTemplate(t *testing.T, values ...string) []byte {
	t.Helper()
	return run(t, "helm", append([]string{"template", release, chartDir, "--namespace", releaseNS}, values...)...)
}

// kustomizeBuild renders a kustomization directory with kubectl's kustomize.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	return run(t, "kubectl", "kustomize", dir)
}

// overlay writes a kustomization over the base with the named components and
// returns its directory.
func overlay(t *testing.T, components ...string) string {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(kustomizeDir)
	require.NoError(t, err)
	base, err := filepath.Rel(dir, filepath.Join(abs, "base"))
	require.NoError(t, err)
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + base + "\n"
	if len(components) > 0 {
		k += "components:\n"
		for _, c := range components {
			rel, err := filepath.Rel(dir, filepath.Join(abs, "components", c))
			require.NoError(t, err)
			k += "  - " + rel + "\n"
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644))
	return dir
}

// objects decodes a multi-document manifest; documents without a kind (empty
// ones) are dropped.
func objects(t *testing.T, manifest []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if m == nil || m["kind"] == nil {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// kinds counts objects by kind.
func kinds(objs []*unstructured.Unstructured) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	return n
}

// find returns the object of a kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}
