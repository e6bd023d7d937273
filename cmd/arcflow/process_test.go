package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKubeRESTConfigTakesTheRateLimits(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`), 0o600))
	cfg, err := kubeRESTConfig(kubeconfig, 120, 360)
	require.NoError(t, err)
	require.Equal(t, float32(120), cfg.QPS)
	require.Equal(t, 360, cfg.Burst)

	_, err = kubeRESTConfig(kubeconfig, 0, 360)
	require.ErrorContains(t, err, "--kube-api-qps 0 and --kube-api-burst 360 must both be positive")
}
