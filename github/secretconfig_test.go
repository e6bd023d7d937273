package github_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
)

func TestConfigFromSecretTakesARCsKeys(t *testing.T) {
	worker := github.Config{Token: "ghp_worker", EnterpriseURL: "https://ghes.example.com/"}
	c, err := github.ConfigFromSecret(map[string][]byte{"github_token": []byte("ghp_org_a")}, worker)
	require.NoError(t, err)
	require.Equal(t, "ghp_org_a", c.Token)
	require.Equal(t, "https://ghes.example.com/api/v3/", c.APIBaseURL(), "the worker's server, as in ARC")

	c, err = github.ConfigFromSecret(map[string][]byte{
		"github_app_id": []byte("12"), "github_app_installation_id": []byte("34"), "github_app_private_key": []byte("-----BEGIN RSA PRIVATE KEY-----"),
		"github_url": []byte("https://proxy.example.com/"),
	}, worker)
	require.NoError(t, err)
	require.Equal(t, int64(12), c.AppID)
	require.Equal(t, "https://proxy.example.com/", c.APIBaseURL(), "a Secret with its own URL keeps it")

	for name, data := range map[string]map[string][]byte{
		"empty":              {},
		"wrong keys":         {"token": []byte("s3cr3t-value")},
		"half an app":        {"github_app_id": []byte("12")},
		"a non-numeric id":   {"github_app_id": []byte("twelve"), "github_app_installation_id": []byte("34"), "github_app_private_key": []byte("k")},
		"a token and an app": {"github_token": []byte("s3cr3t-value"), "github_app_id": []byte("12")},
	} {
		_, err := github.ConfigFromSecret(data, worker)
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "s3cr3t-value", "errors never hold a value")
	}
}
