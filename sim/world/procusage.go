package world

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcessUsage is what a process the stack started (the Temporal server,
// PostgreSQL's postmaster) and the processes under it have used so far.
type ProcessUsage struct {
	// CPU is user+system time of the process, of its live descendants, and of the
	// children it has reaped (PostgreSQL forks a backend per connection).
	CPU time.Duration
	// PeakRSS is the process's own VmHWM, in bytes.
	PeakRSS int64
	// PSS is the proportional set size of the process and its descendants now, in
	// bytes: shared memory (PostgreSQL's shared buffers) counted once, not per process.
	PSS int64
	// Processes counts the process and its live descendants.
	Processes int
}

// UsageOf reads pid's usage from /proc; zero if pid is 0 or gone.
func UsageOf(pid int) ProcessUsage {
	if pid <= 0 || procParent(pid) == 0 {
		return ProcessUsage{}
	}
	own, reaped := procCPU(pid)
	u := ProcessUsage{CPU: own + reaped, PeakRSS: procStatusKB(pid, "VmHWM:") * 1024}
	for _, p := range append([]int{pid}, descendants(pid)...) {
		if p != pid {
			cpu, children := procCPU(p)
			u.CPU += cpu + children
		}
		u.PSS += procFileKB(fmt.Sprintf("/proc/%d/smaps_rollup", p), "Pss:") * 1024
		u.Processes++
	}
	return u
}

// Minus is the CPU used since an earlier reading; the memory figures stay as read.
func (u ProcessUsage) Minus(base ProcessUsage) ProcessUsage {
	u.CPU -= base.CPU
	return u
}

// descendants lists every live process under pid, from the parent field of each
// /proc/<pid>/stat.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parent := procParent(child); parent > 0 {
			children[parent] = append(children[parent], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		out = append(out, children[next]...)
		queue = append(queue, children[next]...)
	}
	return out
}

func procParent(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	parent, _ := strconv.Atoi(fields[1])
	return parent
}
