package deploy_test

import (
	"os/exec"
	"path"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each combination of the TLS values that values.yaml lists renders as it
// says: a client certificate, a server name, a CA or an API key implies TLS
// (before, the chart dropped a server name and mounted no certificate
// without tls.enabled), and the combinations it refuses fail with their
// message. Both processes get the same settings.
func TestChartTemporalTLSCombinations(t *testing.T) {
	t.Parallel()
	type want struct {
		tls        bool
		serverName string
		client     bool   // the client certificate, mounted, and its paths
		ca         string // the CA's volume source: secret or configMap
		apiKey     bool
	}
	for name, c := range map[string]struct {
		values []string
		want   want
	}{
		"nothing":          {nil, want{}},
		"enabled":          {[]string{"temporal.tls.enabled=true"}, want{tls: true}},
		"client cert":      {[]string{"temporal.tls.secretName=temporal-client-tls"}, want{tls: true, client: true}},
		"server name":      {[]string{"temporal.tls.serverName=frontend.temporal"}, want{tls: true, serverName: "frontend.temporal"}},
		"CA from a Secret": {[]string{"temporal.tls.ca.secretName=temporal-ca"}, want{tls: true, ca: "secret"}},
		"CA from a ConfigMap": {[]string{"temporal.tls.ca.configMapName=temporal-ca"},
			want{tls: true, ca: "configMap"}},
		"API key": {[]string{"temporal.apiKeySecretName=temporal-api-key"}, want{tls: true, apiKey: true}},
		"enabled, server name and CA": {[]string{"temporal.tls.enabled=true", "temporal.tls.serverName=frontend.temporal", "temporal.tls.ca.secretName=temporal-ca"},
			want{tls: true, serverName: "frontend.temporal", ca: "secret"}},
		"everything": {[]string{"temporal.tls.enabled=true", "temporal.tls.secretName=temporal-client-tls", "temporal.tls.serverName=frontend.temporal",
			"temporal.tls.ca.configMapName=temporal-ca", "temporal.apiKeySecretName=temporal-api-key"},
			want{tls: true, serverName: "frontend.temporal", client: true, ca: "configMap", apiKey: true}},
	} {
		values := []string{"--set", "temporal.address=" + externalTemporal}
		for _, v := range c.values {
			values = append(values, "--set", v)
		}
		objs := objects(t, helmTemplate(t, values...))
		for _, d := range []string{"arcflow-worker", "arcflow-webhook"} {
			ctr, deployment := container(t, objs, d), find(objs, "Deployment", d)
			where := name + ", " + d
			if !c.want.tls {
				require.Nil(t, envOrNil(ctr, "TEMPORAL_TLS"), where)
				require.NotContains(t, ctr, "volumeMounts", where)
				continue
			}
			require.Equal(t, "true", env(t, ctr, "TEMPORAL_TLS")["value"], where)
			if c.want.serverName != "" {
				require.Equal(t, c.want.serverName, env(t, ctr, "TEMPORAL_TLS_SERVER_NAME")["value"], where)
			} else {
				require.Nil(t, envOrNil(ctr, "TEMPORAL_TLS_SERVER_NAME"), where)
			}
			if c.want.client {
				for variable, file := range map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "tls.crt", "TEMPORAL_TLS_CLIENT_KEY_PATH": "tls.key"} {
					p := env(t, ctr, variable)["value"].(string)
					require.Equal(t, file, path.Base(p), where)
					vol := volume(t, deployment, volumeMount(t, ctr, path.Dir(p))["name"].(string))
					require.Equal(t, "temporal-client-tls", vol["secret"].(map[string]any)["secretName"], where)
				}
			} else {
				require.Nil(t, envOrNil(ctr, "TEMPORAL_TLS_CLIENT_CERT_PATH"), where)
			}
			if c.want.ca != "" {
				p := env(t, ctr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH")["value"].(string)
				vol := volume(t, deployment, volumeMount(t, ctr, path.Dir(p))["name"].(string))
				require.Contains(t, vol, c.want.ca, where)
			} else {
				require.Nil(t, envOrNil(ctr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH"), where)
			}
			if c.want.apiKey {
				ref := env(t, ctr, "TEMPORAL_API_KEY")["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)
				require.Equal(t, map[string]any{"name": "temporal-api-key", "key": "api-key"}, ref, where)
			} else {
				require.Nil(t, envOrNil(ctr, "TEMPORAL_API_KEY"), where)
			}
		}
	}
}

// The combinations values.yaml refuses fail the render with their message.
func TestChartTemporalTLSRefusals(t *testing.T) {
	t.Parallel()
	external := "temporal.address=" + externalTemporal
	const bundled = "set temporal.address too"
	for name, c := range map[string]struct {
		values []string
		want   string
	}{
		"enabled with the bundled Temporal":      {[]string{"temporal.tls.enabled=true"}, bundled},
		"client cert with the bundled Temporal":  {[]string{"temporal.tls.secretName=temporal-client-tls"}, bundled},
		"server name with the bundled Temporal":  {[]string{"temporal.tls.serverName=frontend.temporal"}, bundled},
		"CA Secret with the bundled Temporal":    {[]string{"temporal.tls.ca.secretName=temporal-ca"}, bundled},
		"CA ConfigMap with the bundled Temporal": {[]string{"temporal.tls.ca.configMapName=temporal-ca"}, bundled},
		"API key with the bundled Temporal":      {[]string{"temporal.apiKeySecretName=temporal-api-key"}, bundled},
		"a CA from two places": {[]string{external, "temporal.tls.ca.secretName=a", "temporal.tls.ca.configMapName=b"},
			"temporal.tls.ca: set secretName or configMapName, not both"},
		"a CA without its key": {[]string{external, "temporal.tls.ca.secretName=temporal-ca", "temporal.tls.ca.key="},
			"temporal.tls.ca.key is empty"},
	} {
		args := []string{"template", release, chartDir}
		for _, v := range c.values {
			args = append(args, "--set", v)
		}
		out, err := exec.Command(tool(t, "helm"), args...).CombinedOutput()
		require.Error(t, err, name)
		require.Contains(t, string(out), c.want, name)
	}
}
