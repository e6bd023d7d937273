package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemoRunsToItsSummary runs `make demo` as the README gives it, with a
// smaller workload and --exit, and checks that it leaves nothing running.
func TestDemoRunsToItsSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own stack")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	t.Chdir(root)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	require.NoError(t, runDemo(ctx, []string{"--exit", "--jobs", "6", "--rate", "6", "--dir", dir}))
	// etcd, the API server, kwok, Temporal, the worker and the webhook all run
	// with paths under dir in their command lines.
	require.Empty(t, processesMentioning(t, dir))
}

func processesMentioning(t *testing.T, s string) []string {
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	require.NotEmpty(t, cmdlines)
	var found []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), s) {
			found = append(found, strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}
