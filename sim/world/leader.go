package world

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LeaseName is the workers' leader-election Lease: `arcflow worker`'s
// --leader-election-id default, in the world's namespace (POD_NAMESPACE).
const LeaseName = "arcflow"

// LeaseHolder reads who holds the workers' Lease: arcflow's worker writes its
// identity there as "<host>-<pid>"; "" when nobody holds it.
func (w *World) LeaseHolder(ctx context.Context) (string, error) {
	lease, err := w.Kube.CoordinationV1().Leases(w.cfg.Namespace).Get(ctx, LeaseName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read the Lease %s/%s: %w", w.cfg.Namespace, LeaseName, err)
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// LeaderIndex says which of the processes, by their pids in order, a Lease
// holder identity "<host>-<pid>" names; -1 when none does (no holder, or a pid
// not among them).
func LeaderIndex(holder string, pids []int) int {
	i := strings.LastIndex(holder, "-")
	if i < 0 {
		return -1
	}
	pid, err := strconv.Atoi(holder[i+1:])
	if err != nil || pid <= 0 {
		return -1
	}
	for k, p := range pids {
		if p == pid {
			return k
		}
	}
	return -1
}

// WorkerPids are the worker processes' pids in order, 0 for one not running.
func (w *World) WorkerPids() []int {
	pids := make([]int, len(w.Workers))
	for i, p := range w.Workers {
		pids[i] = p.Pid()
	}
	return pids
}
