package teststack

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// RestartTemporal SIGKILLs the Temporal server, as a node crash or an OOM kill
// would, and starts it again with the same ports and store, as Kubernetes restarts
// the server's pod. It returns once the server answers its health check again.
// A dev server that keeps its state in memory would come back empty, which no
// production server does, so it refuses one.
func (s *Stack) RestartTemporal(ctx context.Context) error {
	if !s.temporalDurable {
		return errors.New("restart Temporal: this dev server keeps its state in memory and would lose every workflow; start the stack with TemporalDB or the cluster")
	}
	s.procsMu.Lock()
	index := -1
	for i, p := range s.procs {
		if p.name == "temporal" || p.name == "temporal-server" {
			index = i
		}
	}
	if index < 0 {
		s.procsMu.Unlock()
		return errors.New("restart Temporal: the stack runs no Temporal server")
	}
	old := s.procs[index]
	// The whole process group, as the kernel does to a container's processes.
	_ = syscall.Kill(-old.cmd.Process.Pid, syscall.SIGKILL)
	<-old.exited
	fresh, err := old.restart()
	if err != nil {
		s.procsMu.Unlock()
		return fmt.Errorf("restart %s: %w", old.name, err)
	}
	s.procs[index] = fresh
	s.procsMu.Unlock()
	return s.waitTemporalServing(ctx, 2*time.Minute)
}
