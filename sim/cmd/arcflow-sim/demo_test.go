package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"
)

// TestMakeDemoStopsCleanlyOnCtrlC runs `make demo` as the README gives it, with a
// smaller workload, on a pseudo-terminal. Once the demo says it keeps running, the
// test types Ctrl-C on that terminal. make must exit 0 after "stopping
// everything", and nothing the demo started may be left running.
func TestMakeDemoStopsCleanlyOnCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own stack")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()

	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "demo", "DEMO_FLAGS=--jobs 6 --rate 6 --dir "+dir)
	cmd.Dir = root
	// pty.Start makes the terminal the controlling one of a new session, as a
	// login shell has it.
	terminal, err := pty.Start(cmd)
	require.NoError(t, err)
	defer terminal.Close()

	var output strings.Builder
	lines := bufio.NewScanner(terminal)
	waiting := false
	for !waiting && lines.Scan() {
		output.WriteString(lines.Text() + "\n")
		waiting = strings.Contains(lines.Text(), "Ctrl-C stops it all")
	}
	require.True(t, waiting, "the demo never reached its summary:\n%s", output.String())
	require.Regexp(t, `jobs done +6 in`, output.String())

	// The terminal's interrupt character: the kernel sends SIGINT to the
	// terminal's foreground process group.
	_, err = terminal.Write([]byte{0x03})
	require.NoError(t, err)
	// The terminal reports EIO once make, the last process on it, has exited.
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
