package world

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestUsageOfCountsDescendants(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	if !slices.Contains(descendants(os.Getpid()), child.Process.Pid) {
		t.Fatalf("descendants of the test process miss its child %d", child.Process.Pid)
	}
	// Use at least one clock tick of CPU, so the reading cannot be zero.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if own, _ := procCPU(os.Getpid()); own > 0 {
			break
		}
	}
	u := UsageOf(os.Getpid())
	if u.Processes < 2 {
		t.Errorf("Processes = %d, want the test process and its child", u.Processes)
	}
	if u.PeakRSS <= 0 || u.PSS <= 0 {
		t.Errorf("PeakRSS = %d, PSS = %d, want both above zero", u.PeakRSS, u.PSS)
	}
	if u.CPU <= 0 {
		t.Errorf("CPU = %v, want the time this test binary has used so far", u.CPU)
	}
	if got := UsageOf(0); got != (ProcessUsage{}) {
		t.Errorf("UsageOf(0) = %+v, want zero", got)
	}
}
