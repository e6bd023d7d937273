package localstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// RestartTemporal SIGKILLs the Temporal server, as a node crash or an OOM kill
// would, and starts it again with the same ports and store, as Kubernetes restarts
// the server's pod. It returns once the server answers its health check again.
// A dev server that keeps its state in memory would come back empty, which no
// production server does, so it refuses one.
func (s *Stack) RestartTemporal(ctx context.Context) error {
	if s.temporalStore == "" && !s.temporalCluster {
		return errors.New("restart Temporal: this dev server keeps its state in memory and would lose every workflow; start the stack with TemporalDB or the cluster")
	}
	return s.killTemporal(ctx, "restart Temporal", func() error { return nil })
}

// LoseTemporalStore SIGKILLs the dev server, deletes its SQLite store and starts
// it again with the same arguments, as a Temporal whose volume was lost with no
// backup and that was set up again: the same ports, and the namespace and search
// attributes that start-dev's flags create, but no workflow. It returns once the
// server answers its health check.
//
// It refuses a dev server in memory, which has no store to lose (its restart
// alone empties it, so a caller could not tell a lost store from a restart), and
// the cluster, whose namespace and search attributes are made by the stack's
// setup (temporal-sql-tool and registrations after start), not by the server's
// arguments, so a server started again on emptied databases would not serve
// arcflow's namespace.
func (s *Stack) LoseTemporalStore(ctx context.Context) error {
	switch {
	case s.temporalCluster:
		return errors.New("lose Temporal's store: the temporal-server cluster keeps it in PostgreSQL, set up (schema, namespace, search attributes) by the stack's start and not by the server's arguments, so restarting on an emptied database would not serve the namespace; use the dev server with TemporalDB")
	case s.temporalStore == "":
		return errors.New("lose Temporal's store: this dev server keeps its state in memory, so there is no store to lose (a restart alone empties it); start the stack with TemporalDB")
	}
	return s.killTemporal(ctx, "lose Temporal's store", func() error { return removeSQLite(s.temporalStore) })
}

// killTemporal SIGKILLs the stack's Temporal server, calls whileDown once it
// has exited, starts it again with the same arguments and waits until it serves.
func (s *Stack) killTemporal(ctx context.Context, what string, whileDown func() error) error {
	s.temporalMu.Lock()
	defer s.temporalMu.Unlock()
	if err := s.replaceTemporal(whileDown); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return s.waitTemporalServing(ctx, 2*time.Minute)
}

func (s *Stack) replaceTemporal(whileDown func() error) error {
	s.procsMu.Lock()
	defer s.procsMu.Unlock()
	index := -1
	for i, p := range s.procs {
		if p.name == "temporal" || p.name == "temporal-server" {
			index = i
		}
	}
	if index < 0 {
		return errors.New("the stack runs no Temporal server")
	}
	old := s.procs[index]
	// The whole process group, as the kernel does to a container's processes.
	_ = syscall.Kill(-old.cmd.Process.Pid, syscall.SIGKILL)
	<-old.exited
	if err := whileDown(); err != nil {
		return err
	}
	fresh, err := old.restart()
	if err != nil {
		return fmt.Errorf("start %s again: %w", old.name, err)
	}
	s.procs[index] = fresh
	return nil
}

// removeSQLite deletes a SQLite database in WAL mode: the file, its write-ahead
// log and its shared-memory index.
func removeSQLite(db string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete Temporal's store: %w", err)
		}
	}
	return nil
}
