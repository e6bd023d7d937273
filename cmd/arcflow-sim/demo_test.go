package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMakeDemoStopsCleanlyOnCtrlC runs `make demo` as the README gives it, with a
// smaller workload. Once the demo says it keeps running, the test interrupts the
// whole process group, as a terminal's Ctrl-C does. make must exit 0 after
// "stopping everything", and nothing the demo started may be left running.
func TestMakeDemoStopsCleanlyOnCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own stack")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()

	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "demo", "DEMO_FLAGS=--jobs 6 --rate 6 --dir "+dir)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	var output strings.Builder
	lines := bufio.NewScanner(stdout)
	waiting := false
	for !waiting && lines.Scan() {
		output.WriteString(lines.Text() + "\n")
		waiting = strings.Contains(lines.Text(), "Ctrl-C stops it all")
	}
	require.True(t, waiting, "the demo never reached its summary:\n%s", output.String())
	require.Regexp(t, `jobs done +6 in`, output.String())

	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
	for lines.Scan() {
		output.WriteString(lines.Text() + "\n")
	}
	require.NoError(t, cmd.Wait(), "make demo must exit 0 on Ctrl-C:\n%s", output.String())
	require.Contains(t, output.String(), "stopping everything the demo started")
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
		if err == nil && strings.Contains(string(data), s) && !strings.Contains(string(data), "DEMO_FLAGS") {
			found = append(found, strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}
