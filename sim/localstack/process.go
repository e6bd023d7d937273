package localstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// process is one child of the stack. Its output goes to logs/<name>.log and its PID to
// pids/<name>.pid, so `make down` can stop it from another process.
type process struct {
	processSpec
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
}

// processSpec is what starts a process, kept so restart can start it again as it was.
type processSpec struct {
	dir      string // the stack's: logs and PID files
	workDir  string
	seq      int
	name     string
	detached bool
	cred     *syscall.Credential
	path     string
	args     []string
}

// startProcess starts a binary in its own process group, under another user's
// credentials if cred is not nil. Unless detached, the child is killed by the
// kernel if this process dies, so a crashed test leaves nothing (Go sets Pdeathsig
// after switching user, so that holds for another user too).
func startProcess(dir, workDir string, seq int, name string, detached bool, cred *syscall.Credential, path string, args ...string) (*process, error) {
	return processSpec{dir: dir, workDir: workDir, seq: seq, name: name, detached: detached, cred: cred, path: path, args: args}.start(os.O_TRUNC)
}

// restart starts a process that has exited again, with the same binary, arguments
// and credentials, appending to its log.
func (p *process) restart() (*process, error) {
	return p.processSpec.start(os.O_APPEND)
}

// start starts the process, opening its log with logMode (os.O_TRUNC or os.O_APPEND).
func (s processSpec) start(logMode int) (*process, error) {
	logPath := filepath.Join(s.dir, "logs", s.name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|logMode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	defer logFile.Close()

	cmd := exec.Command(s.path, s.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = s.workDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr.Credential = s.cred
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	p := &process{processSpec: s, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	// The sequence number orders the PID files, so StopDir stops in reverse start order.
	if err := writePID(s.dir, fmt.Sprintf("%02d-%s", s.seq, s.name), cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// exitedEarly returns an error if the process has already ended.
func (p *process) exitedEarly() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %v; last log lines:\n%s", p.name, p.waitErr, tail(p.logPath, 20))
	default:
		return nil
	}
}

func writePID(dir, name string, pid int) error {
	pidDir := filepath.Join(dir, "pids")
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		return fmt.Errorf("write pid of %s: %w", name, err)
	}
	return os.WriteFile(filepath.Join(pidDir, name+".pid"), []byte(strconv.Itoa(pid)), 0o644)
}

// stopPID stops a process group: SIGTERM, then SIGKILL after the grace period. It
// waits on a pidfd, so it also works for processes this process did not start.
func stopPID(pid int, grace time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil // already gone
	}
	if err != nil {
		return fmt.Errorf("open pid %d: %w", pid, err)
	}
	defer unix.Close(fd)
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	if waitFD(fd, grace) {
		return nil
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if waitFD(fd, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("pid %d did not exit after SIGKILL", pid)
}

// waitFD waits until a pidfd becomes readable, which happens when the process exits.
func waitFD(fd int, timeout time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// StopDir stops every process recorded under dir/pids, newest first, and removes
// the PID files and a PostgreSQL home kept outside dir. It is what `make down`
// runs.
func StopDir(dir string) error {
	pidDir := filepath.Join(dir, "pids")
	entries, err := os.ReadDir(pidDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", pidDir, err)
	}
	var errs []error
	for i := len(entries) - 1; i >= 0; i-- {
		path := filepath.Join(pidDir, entries[i].Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		if err := stopPID(pid, 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", entries[i].Name(), err))
			continue
		}
		_ = os.Remove(path)
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // PostgreSQL's data stays while it may run
	}
	return removePostgresHome(dir)
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
