package localstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// postgres is a private PostgreSQL cluster of the stack: its own data directory
// (in the stack's, or beside it: see postgresHome), a loopback port, its own
// socket directory, and a superuser with a random password. It is never the
// machine's system service.
type postgres struct {
	Port           int
	User, Password string
}

// postgresUser is who runs PostgreSQL when this process is root: the server
// refuses to run as root, and Debian's package creates this user.
const postgresUser = "postgres"

// startPostgres initializes a data directory and starts PostgreSQL on a free
// loopback port, durable as in production (fsync on).
func (s *Stack) startPostgres(ctx context.Context, tools string) (*postgres, error) {
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	bin, err := postgresBinDir(tools, cred)
	if err != nil {
		return nil, err
	}
	home, err := s.postgresHome(cred)
	if err != nil {
		return nil, err
	}
	data, sockets := filepath.Join(home, "data"), filepath.Join(home, "run")
	if err := mkdirOwned(sockets, cred); err != nil {
		return nil, err
	}
	pg := &postgres{User: "temporal", Password: randomHex(16)}
	if err := initdb(ctx, bin, home, data, pg, cred); err != nil {
		return nil, err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	pg.Port = ports[0]
	if err := s.startAs(cred, home, "postgres", filepath.Join(bin, "postgres"),
		"-D", data, "-p", strconv.Itoa(pg.Port), "-k", sockets,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "max_connections=200",
	); err != nil {
		return nil, err
	}
	return pg, s.waitPostgres(ctx, bin, pg.Port)
}

// postgresCredential is the postgres user's when this process is root, nil
// otherwise (an ordinary user may run PostgreSQL as itself).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(postgresUser)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL runs as the %s user, which Debian's postgresql package creates: %w", postgresUser, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func mkdirOwned(dir string, cred *syscall.Credential) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("PostgreSQL directory: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("PostgreSQL directory: %w", err)
		}
	}
	return nil
}

// initdb creates the cluster with pg.User as its superuser. Both local and TCP
// connections need the password (scram-sha-256), as a production server would.
func initdb(ctx context.Context, bin, home, data string, pg *postgres, cred *syscall.Credential) error {
	pwfile := filepath.Join(home, "pwfile")
	if err := os.WriteFile(pwfile, []byte(pg.Password+"\n"), 0o600); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	defer os.Remove(pwfile)
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("initdb: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", pg.User, "--pwfile="+pwfile,
		"--auth=scram-sha-256", "--encoding=UTF8", "--no-locale")
	cmd.Dir = home
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w: %s", data, err, out)
	}
	return nil
}

// waitPostgres polls pg_isready, which exits 0 once the server accepts connections
// (a TCP connect alone succeeds while it is still starting up).
func (s *Stack) waitPostgres(ctx context.Context, bin string, port int) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := s.anyExited(); err != nil {
			return false, err
		}
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port))
		return cmd.Run() == nil, nil
	})
	if err != nil {
		return fmt.Errorf("PostgreSQL not ready on 127.0.0.1:%d: %w", port, err)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
