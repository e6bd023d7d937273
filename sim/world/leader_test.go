package world

import "testing"

func TestLeaderIndexFindsTheWorkerByThePidInTheLeaseIdentity(t *testing.T) {
	pids := []int{4100, 4123}
	for _, c := range []struct {
		holder string
		want   int
	}{
		{"host-4100", 0},
		{"my-host-name-4123", 1},
		{"host-41", -1},
		{"", -1},
		{"host", -1},
		{"host-", -1},
		{"host-0", -1},
	} {
		if got := LeaderIndex(c.holder, pids); got != c.want {
			t.Errorf("LeaderIndex(%q) = %d, want %d", c.holder, got, c.want)
		}
	}
	if got := LeaderIndex("host-0", []int{0}); got != -1 {
		t.Errorf("a stopped worker (pid 0) leads: %d", got)
	}
}
