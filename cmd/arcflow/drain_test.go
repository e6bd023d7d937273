//go:build !webhookonly

package main

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDrainArguments(t *testing.T) {
	t.Setenv("KUBECONFIG", "/etc/kube/config")
	for _, tc := range []struct {
		args  []string
		want  drainOptions
		error string
	}{
		{args: []string{"--namespace", "ci"}, want: drainOptions{namespace: "ci", timeout: time.Hour, hold: 87600 * time.Hour, kubeconfig: "/etc/kube/config"}},
		{args: []string{"-n", "ci", "--timeout=0", "--hold", "24h", "--kubeconfig", "k"}, want: drainOptions{namespace: "ci", hold: 24 * time.Hour, kubeconfig: "k"}},
		{args: []string{"--all-namespaces", "--undo"}, want: drainOptions{allNamespaces: true, undo: true, timeout: time.Hour, hold: 87600 * time.Hour, kubeconfig: "/etc/kube/config"}},
		{args: nil, error: "name a namespace with --namespace NS, or drain every namespace with --all-namespaces"},
		{args: []string{"--undo"}, error: "name a namespace"},
		{args: []string{"-n", "ci", "--all-namespaces"}, error: "--namespace and --all-namespaces exclude each other"},
		{args: []string{"ci"}, error: `drain takes no arguments, got ["ci"]; name the namespace with --namespace`},
		{args: []string{"-n", "ci", "--timeout", "-1s"}, error: "--timeout must not be negative"},
		{args: []string{"-n", "ci", "--hold", "0s"}, error: "--hold must be positive"},
		{args: []string{"-n", "ci", "--hold", "forever"}, error: `invalid value "forever" for flag -hold`},
	} {
		var out bytes.Buffer
		got, err := parseDrainArgs(tc.args, &out)
		if tc.error != "" {
			require.ErrorContains(t, err, tc.error, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		got.temporal = nil
		require.Equal(t, tc.want, *got, "%v", tc.args)
	}
}

// --help says what drain does, what it hands back to ARC, and in which order.
func TestDrainHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := parseDrainArgs([]string{"--help"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, says := range []string{
		"removes its idle runners at once and lets busy ones finish",
		"force-scale", "scale signal", "When it reports",
		"HRA's spec.capacityReservations, as ARC's webhook server writes them", "a second drain doubles nothing",
		"hands back each job\nqueued later itself", "point\nGitHub's webhook at ARC's before the drain",
		"--undo ends the hold", "removes the capacityReservations entries handed back to ARC", "-all-namespaces", "-timeout",
	} {
		require.Contains(t, out.String(), says)
	}
}
