package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The same bench gave a burst of 100 scale set jobs p99 5.6 s on one 2-core
// machine and 1.6 s on another of the same size: latencies on a shared host
// say as much about the host as about arcflow. Each report therefore starts
// with what the machine gave: one core's speed, and how much of the CPU was
// busy, and stolen by the hypervisor, while the bench ran.

// cpuTimes are /proc/stat's first line: jiffies spent by all CPUs.
type cpuTimes struct {
	total, idle, steal uint64
}

// readCPUTimes reads /proc/stat; on a system without it the zero value
// makes loadSince leave the shares out.
func readCPUTimes() cpuTimes {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	defer func() { _ = f.Close() }()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return cpuTimes{}
	}
	return parseCPUTimes(line)
}

// parseCPUTimes reads "cpu user nice system idle iowait irq softirq steal ...".
func parseCPUTimes(line string) cpuTimes {
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, f := range fields[1:] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		if i >= 8 { // guest time is counted in user time already
			break
		}
		t.total += n
		switch i {
		case 3, 4: // idle, iowait
			t.idle += n
		case 7:
			t.steal += n
		}
	}
	return t
}

// coreSpeed is how fast one core hashes with SHA-256, in MB/s: a fixed
// piece of work to compare machines by.
func coreSpeed() float64 {
	buf := make([]byte, 1<<20)
	start := time.Now()
	const rounds = 64
	for range rounds {
		sum := sha256.Sum256(buf)
		buf[0] = sum[0]
	}
	return rounds / time.Since(start).Seconds()
}

// machine names the host, its cores and one core's speed.
func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d CPUs, one core hashing SHA-256 at %.0f MB/s", host, runtime.NumCPU(), coreSpeed())
}

// loadSince says how busy the CPU was between two readings, and how much of
// it the hypervisor took for other guests; empty without readings.
func loadSince(before, after cpuTimes) string {
	total := after.total - before.total
	if before.total == 0 || after.total <= before.total {
		return ""
	}
	busy := float64(total-(after.idle-before.idle)) / float64(total)
	steal := float64(after.steal-before.steal) / float64(total)
	return fmt.Sprintf(" While it ran, %.0f %% of the CPU was busy and %.1f %% stolen by the hypervisor.", 100*busy, 100*steal)
}
