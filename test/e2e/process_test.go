package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	buildOnce   sync.Once
	arcflowBin  string
	errBuilding error
)

// arcflowBinary builds cmd/arcflow once per test binary.
func arcflowBinary(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arcflow-bin-")
		if err != nil {
			errBuilding = err
			return
		}
		arcflowBin = filepath.Join(dir, "arcflow")
		out, err := exec.Command("go", "build", "-o", arcflowBin, "../../cmd/arcflow").CombinedOutput()
		if err != nil {
			errBuilding = &buildError{err: err, out: string(out)}
		}
	})
	require.NoError(t, errBuilding)
	return arcflowBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// workerProcess is `arcflow worker` running as its own process, so a test can
// kill it with SIGKILL like a crashed pod.
type workerProcess struct {
	t         *testing.T
	env       []string
	namespace string
	cmd       *exec.Cmd
	out       bytes.Buffer
}

func startWorkerProcess(t *testing.T, namespace string, env []string) *workerProcess {
	p := &workerProcess{t: t, env: env, namespace: namespace}
	p.start()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("worker output:\n%s", p.out.String())
		}
	})
	return p
}

func (p *workerProcess) start() {
	p.cmd = exec.Command(arcflowBinary(p.t), "worker", "--enable-leader-election", "--log-level=warn", "--watch-namespace="+p.namespace)
	p.cmd.Env = append(os.Environ(), p.env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(p.t, p.cmd.Start())
}

// kill sends SIGKILL and reaps the process.
func (p *workerProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
}

func (p *workerProcess) restart() {
	p.kill()
	p.start()
}
