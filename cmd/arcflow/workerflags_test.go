//go:build !webhookonly

package main

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/activities"
)

// JIT pools default to GitHub's runner image, token pools to summerwind's;
// the environment sets it, the flag wins, and empty falls back to
// --runner-image (activities.PodDefaults).
func TestJITRunnerImageFlag(t *testing.T) {
	parse := func(args ...string) activities.PodDefaults {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		w := addWorkerFlags(fs)
		require.NoError(t, fs.Parse(args))
		return w.podDefaults
	}
	d := parse()
	require.Equal(t, "ghcr.io/actions/actions-runner:latest", d.JITRunnerImage)
	require.Equal(t, "summerwind/actions-runner:latest", d.RunnerImage)

	t.Setenv("ARCFLOW_JIT_RUNNER_IMAGE", "registry.example.com/actions/actions-runner:2.325.0")
	require.Equal(t, "registry.example.com/actions/actions-runner:2.325.0", parse().JITRunnerImage)
	require.Equal(t, "mirror/runner:1", parse("--jit-runner-image=mirror/runner:1").JITRunnerImage)
	require.Empty(t, parse("--jit-runner-image=").JITRunnerImage)
}
