//go:build !webhookonly

package main

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReorderFlagsPutsTheHRANameLastWhereverItIsWritten(t *testing.T) {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.String("n", "", "")
	fs.Int("replicas", 0, "")
	addTemporalFlags(fs)
	for _, args := range [][]string{
		{"app", "-n", "ci", "--replicas", "3", "--temporal-tls"},
		{"-n", "ci", "--temporal-tls", "app", "--replicas=3"},
		{"--temporal-tls", "-n", "ci", "--replicas", "3", "app"},
	} {
		reordered := reorderFlags(fs, args)
		require.Equal(t, "app", reordered[len(reordered)-1], "%v", args)
		require.NoError(t, fs.Parse(reordered))
		require.Equal(t, []string{"app"}, fs.Args(), "%v: a boolean flag does not swallow the name", args)
	}
}
