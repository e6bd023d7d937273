package world

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is an arcflow command running as its own process, so it can be killed
// with SIGKILL like a crashed pod and measured from /proc.
type Process struct {
	Name string
	bin  string
	args []string
	env  []string
	log  string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	restarts int
	// cpuBefore is the CPU time of earlier incarnations, which /proc forgets.
	cpuBefore time.Duration
	peakRSS   int64
}

func startProcess(dir, name, bin string, env []string, args ...string) (*Process, error) {
	p := &Process{Name: name, bin: bin, args: args, env: env, log: filepath.Join(dir, name+".log")}
	return p, p.Start()
}

// Start starts the process (again), appending its output to <dir>/<name>.log.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log file: %w", p.Name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	return nil
}

// Kill sends SIGKILL and waits until the process is gone. It keeps the CPU time
// and peak memory of the process it kills.
func (p *Process) Kill() {
	p.stop(syscall.SIGKILL, 0)
}

// Stop sends SIGTERM, waits up to grace, then kills.
func (p *Process) Stop(grace time.Duration) {
	p.stop(syscall.SIGTERM, grace)
}

func (p *Process) stop(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.sampleLocked()
	p.cpuBefore += p.cpuLocked()
	_ = p.cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-p.exited:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
		}
	}
	<-p.exited
	p.cmd = nil
}

// Restart kills the process and starts it again.
func (p *Process) Restart() error {
	p.Kill()
	p.mu.Lock()
	p.restarts++
	p.mu.Unlock()
	return p.Start()
}

// Restarts counts Restart calls.
func (p *Process) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// Running reports whether the process is alive.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitState says how the process ended, as os.ProcessState tells it ("signal:
// killed", "exit status 1"), or "" while it runs.
func (p *Process) ExitState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return "not started"
	}
	select {
	case <-p.exited:
		return p.cmd.ProcessState.String()
	default:
		return ""
	}
}

// Pid is the running process's ID, 0 when it is not running. arcflow's worker
// names itself by it: "<pid>@<host>@" to Temporal, "<host>-<pid>" in the Lease.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// LogPath is where the process writes its output.
func (p *Process) LogPath() string { return p.log }

// CPU is the user and system CPU time of the process over all its incarnations.
func (p *Process) CPU() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cpuBefore + p.cpuLocked()
}

// PeakRSS is the largest resident set any incarnation reached, in bytes (VmHWM).
func (p *Process) PeakRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sampleLocked()
	return p.peakRSS
}

// RSS is the resident set of the running process now, in bytes.
func (p *Process) RSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return procStatusKB(p.cmd.Process.Pid, "VmRSS:") * 1024
}

// RSSParts splits the resident set now into anonymous memory (the Go heap,
// stacks and runtime) and file pages (the mapped binary), in bytes.
func (p *Process) RSSParts() (anon, file int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0, 0
	}
	pid := p.cmd.Process.Pid
	return procStatusKB(pid, "RssAnon:") * 1024, procStatusKB(pid, "RssFile:") * 1024
}

func (p *Process) sampleLocked() {
	if p.cmd == nil {
		return
	}
	if hwm := procStatusKB(p.cmd.Process.Pid, "VmHWM:") * 1024; hwm > p.peakRSS {
		p.peakRSS = hwm
	}
}

// cpuLocked reads the CPU time of the running incarnation.
func (p *Process) cpuLocked() time.Duration {
	if p.cmd == nil {
		return 0
	}
	own, _ := procCPU(p.cmd.Process.Pid)
	return own
}

// procCPU reads a process's utime+stime and its waited-for children's
// cutime+cstime from /proc/<pid>/stat (in clock ticks of 10 ms); zero if it is gone.
func procCPU(pid int) (own, children time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// The command name may hold spaces; the fields after it are fixed.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 15 {
		return 0, 0
	}
	ticks := func(i int) time.Duration {
		n, _ := strconv.ParseInt(fields[i], 10, 64)
		return time.Duration(n) * 10 * time.Millisecond
	}
	return ticks(11) + ticks(12), ticks(13) + ticks(14)
}

func procStatusKB(pid int, key string) int64 {
	return procFileKB(fmt.Sprintf("/proc/%d/status", pid), key)
}

// procFileKB reads a "Key:   123 kB" line of a /proc file; zero if absent.
func procFileKB(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// SetEnv adds environment variables (KEY=value) for the next Start, which
// override earlier ones of the same key: a Deployment edited and rolled.
func (p *Process) SetEnv(kv ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.env = append(p.env, kv...)
}
