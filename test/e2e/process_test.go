package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/world"
)

var (
	buildOnce   sync.Once
	arcflowBin  string
	errBuilding error
)

// arcflowBinary builds cmd/arcflow, and arcflow-webhook beside it, once per test
// binary, in the stack's directory, which goes with the stack: 100 MB left in
// the system's temporary directory by every run once filled CI's disk.
func arcflowBinary(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp(stack.Dir, "arcflow-bin-")
		if err != nil {
			errBuilding = err
			return
		}
		arcflowBin, errBuilding = world.BuildArcflow(context.Background(), repoRoot(t), dir)
	})
	require.NoError(t, errBuilding)
	return arcflowBin
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
