//go:build !webhookonly

package main

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// ARC's controller-manager Secret with both github_token and the App keys,
// mounted as env: the worker starts with the token, as ARC does, and warns
// without printing the token or the key.
func TestWorkerUsesTheTokenWhenAppKeysAreSetToo(t *testing.T) {
	const key = "-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0LWtleS12YWx1ZQ==\n-----END RSA PRIVATE KEY-----"
	t.Setenv("GITHUB_TOKEN", "ghp_s3cr3t")
	t.Setenv("GITHUB_APP_ID", "12")
	t.Setenv("GITHUB_APP_INSTALLATION_ID", "34")
	t.Setenv("GITHUB_APP_PRIVATE_KEY", key)
	var out bytes.Buffer
	cfg, err := workerGitHubConfig(slog.New(slog.NewTextHandler(&out, nil)))
	require.NoError(t, err)
	require.Equal(t, "ghp_s3cr3t", cfg.Token)
	require.Zero(t, cfg.AppID)
	require.Empty(t, cfg.AppPrivateKey)
	require.NoError(t, cfg.Validate())
	require.Contains(t, out.String(), "level=WARN")
	require.Contains(t, out.String(), "arcflow uses the token, as ARC does")
	for _, value := range []string{"ghp_s3cr3t", "c2VjcmV0LWtleS12YWx1ZQ", "BEGIN RSA"} {
		require.NotContains(t, out.String(), value, "the log holds no credential")
	}

	t.Setenv("GITHUB_APP_ID", "")
	t.Setenv("GITHUB_APP_INSTALLATION_ID", "")
	t.Setenv("GITHUB_APP_PRIVATE_KEY", "")
	out.Reset()
	cfg, err = workerGitHubConfig(slog.New(slog.NewTextHandler(&out, nil)))
	require.NoError(t, err)
	require.Equal(t, "ghp_s3cr3t", cfg.Token)
	require.Empty(t, out.String(), "a token alone says nothing")
}
