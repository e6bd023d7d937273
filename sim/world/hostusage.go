package world

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// HostCPU is the machine's CPU time since boot from /proc/stat: busy (every
// state but idle and iowait) and total. The machine is shared, so what it
// shows includes other people's processes; the per-process figures do not.
type HostCPU struct{ Busy, Total time.Duration }

// ReadHostCPU reads the "cpu" line of /proc/stat (in clock ticks of 10 ms);
// zero if it cannot.
func ReadHostCPU() HostCPU {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return HostCPU{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return HostCPU{}
	}
	var h HostCPU
	// guest and guest_nice (fields 9 and 10) are already counted in user.
	for i, f := range fields[1:min(len(fields), 9)] {
		n, _ := strconv.ParseInt(f, 10, 64)
		d := time.Duration(n) * 10 * time.Millisecond
		h.Total += d
		if i != 3 && i != 4 { // idle, iowait
			h.Busy += d
		}
	}
	return h
}

// BusyCores is the cores busy on average between base and h.
func (h HostCPU) BusyCores(base HostCPU, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return (h.Busy - base.Busy).Seconds() / wall.Seconds()
}

// MemAvailable is the machine's MemAvailable from /proc/meminfo, in bytes.
func MemAvailable() int64 {
	return procFileKB("/proc/meminfo", "MemAvailable:") * 1024
}

// SelfCPU is this process's own CPU time (the simulator: fake GitHub, runners,
// webhook sender).
func SelfCPU() time.Duration {
	own, _ := procCPU(os.Getpid())
	return own
}

// WriteBytes is what pid and its live descendants have caused to be written
// to storage (write_bytes of /proc/<pid>/io): the Temporal server's store, or
// PostgreSQL's. Zero if pid is 0 or gone.
func WriteBytes(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	var total int64
	for _, p := range append([]int{pid}, descendants(pid)...) {
		// procFileKB parses "key: n" lines; /proc/<pid>/io has no unit, so n is bytes.
		total += procFileKB(fmt.Sprintf("/proc/%d/io", p), "write_bytes:")
	}
	return total
}
