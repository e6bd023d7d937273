package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadSinceReadsBusyAndStolenShares(t *testing.T) {
	before := parseCPUTimes("cpu  100 0 100 700 100 0 0 0 0 0")
	after := parseCPUTimes("cpu  400 0 200 900 100 0 0 100 50 0")
	require.Equal(t, cpuTimes{total: 1000, idle: 800, steal: 0}, before)
	require.Equal(t, cpuTimes{total: 1700, idle: 1000, steal: 100}, after, "guest time is inside user time, not added again")
	assert.Equal(t, " While it ran, 71 % of the CPU was busy and 14.3 % stolen by the hypervisor.", loadSince(before, after))
	assert.Empty(t, loadSince(cpuTimes{}, after), "no reading at the start")
	assert.Equal(t, cpuTimes{}, parseCPUTimes("intr 1 2 3"))
}
