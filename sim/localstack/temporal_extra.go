package localstack

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// ExtraTemporal is a dev server of a test's own beside the stack's, on a
// SQLite store: a test can lose its store, or move arcflow from one Temporal
// to another, without touching the Temporal the other tests share.
type ExtraTemporal struct {
	// Address is its frontend, host:port.
	Address string
	db      string
	proc    *process
}

// extraTemporals numbers extra servers for their logs and PID files.
var extraTemporals atomic.Int32

// StartExtraTemporal starts a dev server named name (its log is
// logs/<name>.log) with the search attributes given (name to type), and
// waits until it serves.
func (s *Stack) StartExtraTemporal(ctx context.Context, name string, searchAttributes map[string]string) (*ExtraTemporal, error) {
	tools, err := ToolsDir()
	if err != nil {
		return nil, err
	}
	bin, err := tool(tools, "temporal")
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	t := &ExtraTemporal{db: filepath.Join(s.Dir, name+".db"), Address: "127.0.0.1:" + strconv.Itoa(ports[0])}
	args := []string{
		"server", "start-dev", "--ip=127.0.0.1", "--headless", "--log-level=warn",
		"--port=" + strconv.Itoa(ports[0]), "--http-port=" + strconv.Itoa(ports[1]), "--metrics-port=" + strconv.Itoa(ports[2]),
	}
	args = append(append(args, sqliteStoreFlags(t.db)...), keyValueFlags("--search-attribute", searchAttributes)...)
	t.proc, err = startProcess(s.Dir, s.Dir, 90+int(extraTemporals.Add(1)), name, false, nil, bin, args...)
	if err != nil {
		return nil, err
	}
	return t, t.waitServing(ctx)
}

// LoseStore kills the server, deletes its store, and starts it again empty on
// the same address, as a Temporal whose disk was lost and that was set up
// again (its namespace and search attributes, by its arguments).
func (t *ExtraTemporal) LoseStore(ctx context.Context) error {
	if err := t.Stop(); err != nil {
		return err
	}
	if err := removeSQLite(t.db); err != nil {
		return fmt.Errorf("lose Temporal's store: %w", err)
	}
	return t.Start(ctx)
}

// Start starts a stopped server again on the same address and store, as
// Kubernetes starts the bundled Temporal's pod again after an upgrade or a
// drain, and waits until it serves.
func (t *ExtraTemporal) Start(ctx context.Context) error {
	fresh, err := t.proc.restart()
	if err != nil {
		return fmt.Errorf("restart %s: %w", t.proc.name, err)
	}
	t.proc = fresh
	return t.waitServing(ctx)
}

// Stop kills the server's process group, as a lost node would, and waits for it.
func (t *ExtraTemporal) Stop() error {
	select {
	case <-t.proc.exited:
		return nil
	default:
	}
	if err := syscall.Kill(-t.proc.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("stop %s: %w", t.proc.name, err)
	}
	<-t.proc.exited
	return nil
}

// Temporal runs the real temporal CLI against this server.
func (t *ExtraTemporal) Temporal(ctx context.Context, args ...string) (string, error) {
	return temporalCLI(ctx, t.Address, args...)
}

func (t *ExtraTemporal) waitServing(ctx context.Context) error {
	return waitTemporalServing(ctx, t.Address, t.proc.exitedEarly, time.Minute)
}
