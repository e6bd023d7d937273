package e2e

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// With Temporal TLS and an API key, the chart's env and mounts agree: the client
// certificate and key paths it sets name files of the Secret it mounts, and the
// API key comes from its Secret. Both Deployments are resolved as the host runs
// them (hostContainer), from the Secrets in the cluster.
func TestHelmTemporalTLSPathsPointIntoTheMountedSecret(t *testing.T) {
	parallel(t)
	const ns = "chart-tls"
	ctx := testContext(t)
	createNamespace(t, ctx, ns)
	for _, secret := range [][]string{
		{"temporal-tls", "--from-literal=tls.crt=CERT PEM", "--from-literal=tls.key=KEY PEM"},
		{"temporal-api-key", "--from-literal=api-key=tmprl-key"},
		{"github-webhook-server", "--from-literal=github_webhook_secret_token=" + webhookSecret},
	} {
		out, err := stack.Kubectl(ctx, append([]string{"create", "secret", "generic", "-n", ns}, secret...)...)
		require.NoError(t, err, out)
	}
	rendered := runHelm(t, ctx, "template", "arcflow", chartDir(t), "--namespace", ns,
		"--set", "temporal.address=example.tmprl.cloud:7233", "--set", "temporal.tls.enabled=true",
		"--set", "temporal.tls.secretName=temporal-tls", "--set", "temporal.apiKeySecretName=temporal-api-key")
	kube, err := stack.Kube()
	require.NoError(t, err)

	deployments := renderedDeployments(t, rendered)
	require.Len(t, deployments, 2)
	for _, d := range deployments {
		d.Namespace = ns
		c := resolveContainer(t, ctx, kube, d, d.Spec.Template.Spec.Containers[0].Name)
		for name, want := range map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "CERT PEM", "TEMPORAL_TLS_CLIENT_KEY_PATH": "KEY PEM"} {
			path := c.lookup(name)
			require.NotEmpty(t, path, "%s sets %s", d.Name, name)
			data, err := os.ReadFile(path)
			require.NoError(t, err, "%s: %s names a file of the mounted Secret", d.Name, name)
			require.Equal(t, want, string(data))
		}
		require.Equal(t, "tmprl-key", c.lookup("TEMPORAL_API_KEY"), d.Name)
		require.Equal(t, "true", c.lookup("TEMPORAL_TLS"), d.Name)
		require.Len(t, c.mapped, 2, "%s: the two TLS paths map into the mount", d.Name)
		t.Logf("%s: %q", d.Name, c.mapped)
	}
}

// renderedDeployments decodes the Deployments of a multi-document manifest.
func renderedDeployments(t *testing.T, manifest string) []*appsv1.Deployment {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []*appsv1.Deployment
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if !strings.Contains(string(doc), "kind: Deployment") {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		require.NoError(t, err)
		if d, ok := obj.(*appsv1.Deployment); ok {
			out = append(out, d)
		}
	}
}
