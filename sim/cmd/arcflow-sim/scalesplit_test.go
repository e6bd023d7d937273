package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

func TestWorkerSharesAreEachWorkersDifferenceOverTheWindow(t *testing.T) {
	a := []workerSnap{{cpu: 10 * time.Second, rss: 1, workflowTasks: 100, activityTasks: 50, localActivities: 5, kubeRequests: 600}, {cpu: 2 * time.Second}}
	b := []workerSnap{{cpu: 40 * time.Second, rss: 80 << 20, workflowTasks: 400, activityTasks: 150, localActivities: 25, kubeRequests: 1200}, {cpu: 17 * time.Second, rss: 60 << 20, workflowTasks: 300, activityTasks: 100, tasksErr: errors.New("scrape")}}
	got := workerShares(a, b, time.Minute)
	if len(got) != 2 {
		t.Fatalf("%d shares, want 2", len(got))
	}
	if got[0].cpu != 0.5 || got[0].rss != 80<<20 || got[0].workflowTasks != 300 || got[0].activityTasks != 100 || got[0].localActivities != 20 || got[0].kubeRPS != 10 || got[0].tasksErr != nil {
		t.Errorf("worker 1: %+v", got[0])
	}
	if got[1].cpu != 0.25 || got[1].tasksErr == nil {
		t.Errorf("worker 2: %+v, want 0.25 cores and its read error kept", got[1])
	}
}

func TestLeadsSaysWhoHeldTheLeaseAtBothEndsOfTheWindow(t *testing.T) {
	one, two, none := leaderSnap{index: 0}, leaderSnap{index: 1}, leaderSnap{index: -1}
	unread := leaderSnap{index: -1, err: errors.New("forbidden")}
	for _, c := range []struct {
		i    int
		a, b leaderSnap
		want string
	}{
		{0, one, one, "yes"},
		{1, one, one, "no"},
		{0, one, two, "at the start, not at the end"},
		{1, one, two, "at the end, not at the start"},
		{0, none, none, "no"},
		{0, one, unread, "not read"},
	} {
		if got := leads(c.i, c.a, c.b); got != c.want {
			t.Errorf("leads(%d, %v, %v) = %q, want %q", c.i, c.a, c.b, got, c.want)
		}
	}
}

func TestSplitTableGivesEachWorkersShareOrSaysNotRead(t *testing.T) {
	window := world.Window{From: time.Unix(0, 0), To: time.Unix(120, 0)}
	rows := []scaleRow{
		{rate: 2, window: window, leaderStart: leaderSnap{index: 1}, leaderEnd: leaderSnap{index: 1}, workers: []workerShare{
			{cpu: 0.1, rss: 80 << 20, workflowTasks: 300, activityTasks: 60, localActivities: 10, kubeRPS: 1.5},
			{cpu: 0.2, rss: 90 << 20, workflowTasks: 100, activityTasks: 40, localActivities: 30, kubeRPS: 12.25},
		}},
		{rate: 5, window: window, leaderStart: leaderSnap{index: 0}, leaderEnd: leaderSnap{index: 0}, workers: []workerShare{
			{cpu: 0.3, workflowTasks: 10},
			{cpu: 0.1, tasksErr: errors.New("scrape")},
		}},
		{rate: 10, stop: "error"},
	}
	got := splitTable(rows)
	for _, want := range []string{
		"| 2 | worker 1 | no | 0.10 | 80.0 MiB | 300 (75 %) | 60 (60 %) | 10 (25 %) | 1.5 |",
		"| 2 | worker 2 | yes | 0.20 | 90.0 MiB | 100 (25 %) | 40 (40 %) | 30 (75 %) | 12.2 |",
		"| 5 | worker 1 | yes | 0.30 | 0.0 MiB | 10 | 0 | 0 | 0.0 |",
		"| 5 | worker 2 | no | 0.10 | 0.0 MiB | not read | not read | not read | not read |",
		"| 10 | not measured |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no line %q in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 2+2+2+1 {
		t.Errorf("%d lines, want header 2, two per measured step, one for the unmeasured:\n%s", n, got)
	}
}

func TestWorkerCount(t *testing.T) {
	if got := workerCount(1); got != "1 worker" {
		t.Errorf("%q", got)
	}
	if got := workerCount(2); got != "2 workers" {
		t.Errorf("%q", got)
	}
}
