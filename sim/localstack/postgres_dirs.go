package localstack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// As root, PostgreSQL runs as the postgres user, which must be able to reach its
// binaries and its data. A clone under a private directory (/root, mode 0700) is
// reachable by neither: the binaries are run from Debian's own directory, which
// .tools/postgres-bin only links to, and the data lives in a private directory
// under os.TempDir() when the stack directory is out of reach.

// debianPostgres is where Debian's postgresql package puts each major version's
// server binaries.
const debianPostgres = "/usr/lib/postgresql"

// postgresBinDir is the real directory of PostgreSQL's server binaries: the
// target of the .tools/postgres-bin link scripts/tools.sh makes, or without the
// link the newest version under /usr/lib/postgresql. The child switches to the
// postgres user before it execs, so that user must be able to walk the path: the
// link's target, not the link inside the clone.
func postgresBinDir(tools string, cred *syscall.Credential) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(tools), "postgres-bin"))
	if errors.Is(err, fs.ErrNotExist) {
		dir, err = newestPostgres(debianPostgres)
	}
	if err != nil {
		return "", fmt.Errorf("PostgreSQL binaries (run `make tools`): %w", err)
	}
	for _, name := range []string{"initdb", "postgres", "pg_isready"} {
		if _, err := tool(dir, name); err != nil {
			return "", fmt.Errorf("PostgreSQL: %w", err)
		}
	}
	blocked, err := blockedBy(dir, cred)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL binaries: %w", err)
	}
	if blocked != "" {
		return "", fmt.Errorf("PostgreSQL binaries in %s: %s", dir, blocked)
	}
	return dir, nil
}

// newestPostgres is <root>/<highest major>/bin, as scripts/tools.sh picks it
// (sort -V: 15 is newer than 9).
func newestPostgres(root string) (string, error) {
	initdbs, _ := filepath.Glob(filepath.Join(root, "*", "bin", "initdb"))
	major := func(initdb string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
		return n
	}
	if len(initdbs) == 0 {
		return "", fmt.Errorf("no %s/*/bin/initdb: install Debian's postgresql package: %w", root, fs.ErrNotExist)
	}
	newest := slices.MaxFunc(initdbs, func(a, b string) int { return major(a) - major(b) })
	return filepath.Dir(newest), nil
}

// postgresHome is the directory for PostgreSQL's data and sockets, made and
// owned by its user: postgres/ in the stack directory when that user can reach
// it, otherwise a new private directory under os.TempDir(), which postgres/ then
// links to and removePostgresHome removes with the stack.
func (s *Stack) postgresHome(cred *syscall.Credential) (string, error) {
	inStack := filepath.Join(s.Dir, "postgres")
	blocked, err := blockedBy(s.Dir, cred)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL data: %w", err)
	}
	if blocked == "" {
		return inStack, mkdirOwned(inStack, cred)
	}
	tmp := os.TempDir()
	tmpBlocked, err := blockedBy(tmp, cred)
	if err != nil {
		return "", fmt.Errorf("PostgreSQL data: %w", err)
	}
	if tmpBlocked != "" {
		return "", fmt.Errorf("PostgreSQL data: neither the stack directory %s (%s) nor the temporary directory %s (%s) is reachable: choose a stack directory the %s user can reach",
			s.Dir, blocked, tmp, tmpBlocked, postgresUser)
	}
	home, err := MakeScratchDir(tmp, "arcflow-postgres-")
	if err != nil {
		return "", fmt.Errorf("PostgreSQL data outside the stack directory (%s): %w", blocked, err)
	}
	if err := errors.Join(mkdirOwned(home, cred), os.Symlink(home, inStack)); err != nil {
		return "", errors.Join(fmt.Errorf("PostgreSQL data in %s (%s): %w", home, blocked, err), os.RemoveAll(home))
	}
	return home, nil
}

// removePostgresHome removes a PostgreSQL home outside the stack directory dir,
// and the link to it; a home inside dir goes with dir.
func removePostgresHome(dir string) error {
	link := filepath.Join(dir, "postgres")
	home, err := os.Readlink(link)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EINVAL) { // no link: none, or a plain directory
		return nil
	}
	if err != nil {
		return fmt.Errorf("PostgreSQL home: %w", err)
	}
	if err := os.RemoveAll(home); err != nil {
		return fmt.Errorf("remove PostgreSQL home %s: %w", home, err)
	}
	if err := os.Remove(link); err != nil {
		return fmt.Errorf("remove PostgreSQL home link: %w", err)
	}
	return nil
}

// blockedBy names the first directory on the way to dir (dir included) that the
// user of cred may not pass through, with its owner and mode; "" when there is
// none, or when cred is nil (this process's own user). The child runs with
// cred's user and group only (no supplementary groups), as the kernel checks it:
// owner bits for the owner, else group bits for the group, else the others'.
func blockedBy(dir string, cred *syscall.Credential) (string, error) {
	if cred == nil {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("reach %s: %w", dir, err)
	}
	var path []string
	for d := abs; ; d = filepath.Dir(d) {
		path = append(path, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, d := range slices.Backward(path) {
		fi, err := os.Stat(d)
		if err != nil {
			return "", fmt.Errorf("reach %s: %w", dir, err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		search := fs.FileMode(0o001)
		switch {
		case st.Uid == cred.Uid:
			search = 0o100
		case st.Gid == cred.Gid:
			search = 0o010
		}
		if fi.Mode().Perm()&search == 0 {
			return fmt.Sprintf("the %s user cannot enter %s (mode %v, owner %d:%d)", postgresUser, d, fi.Mode().Perm(), st.Uid, st.Gid), nil
		}
	}
	return "", nil
}
