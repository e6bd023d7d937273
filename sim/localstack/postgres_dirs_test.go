package localstack

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// As root, PostgreSQL starts for a stack directory its user cannot reach (a clone
// under /root, mode 0700): its binaries from Debian's directory, its data in a
// private directory under os.TempDir() that Stop removes.
func TestPostgresStartsForAStackDirItsUserCannotReach(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root runs PostgreSQL as another user")
	}
	tools, err := ToolsDir()
	require.NoError(t, err)
	cred, err := postgresCredential()
	require.NoError(t, err)
	private, err := os.MkdirTemp("", "arcflow-private-") // 0700, like /root
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(private) })
	s := &Stack{Dir: filepath.Join(private, "stack")}
	require.NoError(t, os.MkdirAll(s.Dir, 0o755))

	blocked, err := blockedBy(s.Dir, cred)
	require.NoError(t, err)
	require.Contains(t, blocked, "cannot enter "+private+" (mode -rwx------, owner 0:0)", "the check names the directory in the way")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.startPostgres(ctx, tools)
	require.NoError(t, err, s.LogTails(20))
	home, err := os.Readlink(filepath.Join(s.Dir, "postgres"))
	require.NoError(t, err, "the stack directory links to where the data is")
	require.Equal(t, filepath.Clean(os.TempDir()), filepath.Dir(home))
	fi, err := os.Stat(home)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.Equal(t, cred.Uid, fi.Sys().(*syscall.Stat_t).Uid)
	require.DirExists(t, filepath.Join(home, "data", "base"), "initdb ran there")

	require.NoError(t, s.Stop())
	require.NoDirExists(t, home)
	require.NoFileExists(t, filepath.Join(s.Dir, "postgres"))
}

// Without the .tools/postgres-bin link, the newest major version is used.
func TestNewestPostgres(t *testing.T) {
	root := t.TempDir()
	_, err := newestPostgres(root)
	require.ErrorIs(t, err, os.ErrNotExist)
	for _, major := range []string{"9", "15", "13"} {
		bin := filepath.Join(root, major, "bin")
		require.NoError(t, os.MkdirAll(bin, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(bin, "initdb"), nil, 0o755))
	}
	dir, err := newestPostgres(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "15", "bin"), dir)
}
