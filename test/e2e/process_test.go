package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// arcflowBinary is cmd/arcflow built from this tree (builtArcflow).
func arcflowBinary(t *testing.T) string {
	bin, err := builtArcflow()
	require.NoError(t, err)
	return bin
}

// arcflowProcess is an arcflow command running as its own process, so a test can
// kill it with SIGKILL like a crashed pod.
type arcflowProcess struct {
	t    *testing.T
	env  []string
	args []string
	cmd  *exec.Cmd
	out  bytes.Buffer
}

// workerProcess is `arcflow worker`.
type workerProcess = arcflowProcess

func startWorkerProcess(t *testing.T, namespace string, env []string) *workerProcess {
	return startProcess(t, env, "worker", "--metrics-addr=127.0.0.1:0", "--enable-leader-election", "--log-level=warn", "--watch-namespace="+namespace)
}

func startProcess(t *testing.T, env []string, args ...string) *arcflowProcess {
	p := &arcflowProcess{t: t, env: env, args: args}
	p.start()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", p.args[0], p.out.String())
		}
	})
	return p
}

func (p *arcflowProcess) start() {
	p.cmd = exec.Command(arcflowBinary(p.t), p.args...)
	p.cmd.Env = append(os.Environ(), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(p.t, p.cmd.Start())
}

// kill sends SIGKILL and reaps the process.
func (p *arcflowProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
}

func (p *arcflowProcess) restart() {
	p.kill()
	p.start()
}
