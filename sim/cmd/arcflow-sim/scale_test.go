package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arcflow/arcflow/sim"
	"github.com/arcflow/arcflow/sim/fakegithub"
	"github.com/arcflow/arcflow/sim/world"
)

func TestStopReasonStopsOnWaitsRefusalsAndMemoryOnly(t *testing.T) {
	limits := scaleLimits{p99: 5 * time.Second, minFreeMemory: 1 << 30}
	ok := scaleRow{toStarted: world.Percentiles{N: 10, P99: 4 * time.Second}}
	for _, c := range []struct {
		name string
		row  scaleRow
		free int64
		want string
	}{
		{"under every limit", ok, 2 << 30, ""},
		{"p99 at the limit", scaleRow{toStarted: world.Percentiles{N: 10, P99: 5 * time.Second}}, 2 << 30, ""},
		{"p99 past the limit", scaleRow{toStarted: world.Percentiles{N: 10, P99: 5100 * time.Millisecond}}, 2 << 30, "p99 5.1s > 5s"},
		{"a refused delivery", scaleRow{rejected: 1, toStarted: ok.toStarted}, 2 << 30, "refused 1"},
		{"a failed delivery", scaleRow{failed: 2, toStarted: ok.toStarted}, 2 << 30, "failed 2"},
		{"memory short", ok, 512 << 20, "free memory 512.0 MiB < 1024.0 MiB"},
		{"no jobs measured", scaleRow{}, 2 << 30, ""},
	} {
		got := stopReason(c.row, limits, c.free)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: stop %q, want %q", c.name, got, c.want)
		}
	}
}

func TestScalePlotPutsEachPointWhereItsValueIs(t *testing.T) {
	svg := scalePlot("t", []plotPanel{{title: "p", unit: "s", series: []plotSeries{
		{name: "a", color: "red", xs: []float64{1, 10, 100}, ys: []float64{0, 5, 10}},
	}}})
	// x on a log scale from the left margin to the right edge of the chart; y
	// from the bottom (0) to the top (10, already a round maximum); the panel
	// starts 20 below the title.
	left, right := plotLeft, plotLeft+plotInnerW
	top, bottom := 20+plotTop, 20+plotTop+plotInnerH
	want := []string{
		pt(left, bottom), pt((left+right)/2, (top+bottom)/2), pt(right, top),
	}
	m := regexp.MustCompile(`points="([^"]*)"`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no polyline in\n%s", svg)
	}
	if got := strings.Fields(m[1]); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("points %v, want %v", got, want)
	}
	if !strings.HasPrefix(svg, "<svg ") || !strings.HasSuffix(svg, "</svg>\n") {
		t.Errorf("not one svg element")
	}
}

func pt(x, y float64) string { return fmt.Sprintf("%.1f,%.1f", x, y) }

func TestNiceMaxRoundsUpToOneTwoOrFive(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.2: 2, 4.9: 5, 6: 10, 23: 50, 101: 200} {
		if got := niceMax(in); got != want {
			t.Errorf("niceMax(%v) = %v, want %v", in, got, want)
		}
	}
}

// A step's row reads only the jobs queued in its window; a job not started
// yet counts its wait so far, and a job whose runner was up before it waited
// 0 for a pod.
func TestScaleRowReadsTheWindowsJobs(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	a := scaleSnap{at: t0, answers: 1}
	b := scaleSnap{at: t0.Add(100 * time.Second), answers: 3, githubCalls: 6, kubeRequests: 200, worker: 50 * time.Second}
	jobs := []fakegithub.JobInfo{
		{ID: 1, CreatedAt: t0.Add(-time.Second), StartedAt: t0.Add(time.Second), RunnerName: "r1"},          // before the window
		{ID: 2, CreatedAt: t0.Add(10 * time.Second), StartedAt: t0.Add(12 * time.Second), RunnerName: "r2"}, // pod Running 1 s after
		{ID: 3, CreatedAt: t0.Add(20 * time.Second), StartedAt: t0.Add(21 * time.Second), RunnerName: "r3"}, // an idle runner
		{ID: 4, CreatedAt: t0.Add(99 * time.Second)},                                                        // not started when read
	}
	pods := []sim.PodTimes{{Name: "r2", Ready: t0.Add(11 * time.Second)}, {Name: "r3", Ready: t0}}
	answers := []time.Duration{time.Second, 10 * time.Millisecond, 20 * time.Millisecond}
	r := newScaleRow(2, a, b, jobs, pods, answers, t0.Add(109*time.Second))
	if r.jobs != 3 || r.unstarted != 1 {
		t.Errorf("%d jobs, %d unstarted; want 3, 1", r.jobs, r.unstarted)
	}
	if r.toStarted.P99 != 10*time.Second || r.toStarted.P50 != 2*time.Second {
		t.Errorf("queued → started %v, want p50 2s, p99 10s (job 4's wait so far)", r.toStarted)
	}
	if r.toRunning.N != 2 || r.toRunning.P50 != 0 || r.toRunning.P99 != time.Second {
		t.Errorf("queued → Running %+v, want 0 and 1s", r.toRunning)
	}
	if r.webhookP99 != 20*time.Millisecond || r.answers != 2 {
		t.Errorf("webhook p99 %v over %d answers, want 20ms over 2", r.webhookP99, r.answers)
	}
	if r.githubPerJob != 2 || r.kubeRPS != 2 || r.worker != 0.5 {
		t.Errorf("GitHub calls per job %v, kube req/s %v, worker cores %v; want 2, 2, 0.5", r.githubPerJob, r.kubeRPS, r.worker)
	}
}

func TestSlowestLabelsNamesThePoolsOfTheSlowestJobs(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var jobs []fakegithub.JobInfo
	for i := range 200 {
		label, wait := "rd-10", time.Second
		if i < 3 {
			label, wait = "rd-00", time.Minute
		}
		jobs = append(jobs, fakegithub.JobInfo{ID: int64(i), Labels: []string{"self-hosted", "linux", label}, CreatedAt: t0, StartedAt: t0.Add(wait)})
	}
	jobs = append(jobs, fakegithub.JobInfo{ID: 999, Labels: []string{"self-hosted", "linux", "shared"}, CreatedAt: t0})
	// 201 jobs: the slowest 1 % is 3 (rounded up): the unstarted one, waiting
	// 2 minutes when read, and two of the minute-long rd-00 ones.
	if got, want := slowestLabels(jobs, t0.Add(2*time.Minute), 0.01), "rd-00 ×2, shared ×1"; got != want {
		t.Errorf("slowest %q, want %q", got, want)
	}
}

// A step that failed before its window has no figures: its row says so with
// as many cells as the header, and the plot leaves it out instead of drawing
// zeros.
func TestAStepThatFailedIsNeitherZerosInTheTableNorInThePlot(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	ok := scaleRow{rate: 1, window: world.Window{From: t0, To: t0.Add(time.Minute)}, toStarted: world.Percentiles{N: 1, P99: time.Second}}
	failed := scaleRow{rate: 2, stop: "error: scrape"}
	table := scaleTable([]scaleRow{ok, failed})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	header := strings.Count(lines[0], "|")
	if got := strings.Count(lines[3], "|"); got != header || !strings.Contains(lines[3], "not measured") {
		t.Errorf("failed row %q: %d cells' bars, header %d", lines[3], got, header)
	}
	panels := scalePanels([]scaleRow{ok, failed}, 5*time.Second)
	if xs := panels[0].series[0].xs; len(xs) != 1 || xs[0] != 1 {
		t.Errorf("plotted rates %v, want [1]", xs)
	}
}
