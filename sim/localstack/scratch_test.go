package localstack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory whose maker is gone is removed by the next MakeScratchDir of
// its prefix; one whose maker runs, and one with no owner file, stay.
func TestMakeScratchDirRemovesOnlyOrphans(t *testing.T) {
	parent := t.TempDir()
	mine, err := MakeScratchDir(parent, "stack-")
	require.NoError(t, err)

	// An orphan: marked by a process that has exited.
	gone := exec.Command("true")
	require.NoError(t, gone.Start())
	identity, err := processIdentity(gone.Process.Pid)
	require.NoError(t, err)
	require.NoError(t, gone.Wait())
	orphan := filepath.Join(parent, "stack-orphan")
	require.NoError(t, os.MkdirAll(filepath.Join(orphan, "etcd"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(orphan, ownerFile), identity, 0o644))
	// The same PID with another start time is another process: an orphan too.
	reused := filepath.Join(parent, "stack-reused")
	require.NoError(t, os.MkdirAll(reused, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(reused, ownerFile), []byte(strconv.Itoa(os.Getpid())+" 1"), 0o644))
	unmarked := filepath.Join(parent, "stack-unmarked")
	require.NoError(t, os.MkdirAll(unmarked, 0o755))
	otherPrefix := filepath.Join(parent, "other-orphan")
	require.NoError(t, os.MkdirAll(otherPrefix, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(otherPrefix, ownerFile), identity, 0o644))

	next, err := MakeScratchDir(parent, "stack-")
	require.NoError(t, err)
	for _, kept := range []string{mine, next, unmarked, otherPrefix} {
		require.DirExists(t, kept)
	}
	require.NoDirExists(t, orphan)
	require.NoDirExists(t, reused)
}
