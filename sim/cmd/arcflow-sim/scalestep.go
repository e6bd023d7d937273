package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/arcflow/arcflow/sim/world"
)

// scaleStep runs one step at the rate already set: warm-up, the measured
// window, then the grace period before the window's jobs are read.
func scaleStep(ctx context.Context, s *session, w *world.World, o scaleOptions, rate float64) (scaleRow, error) {
	row := scaleRow{rate: rate}
	if err := sleepCtx(ctx, o.warmup); err != nil {
		return row, err
	}
	for i, p := range w.Workers {
		if !p.Running() {
			return row, fmt.Errorf("%s exited (see %s)", workerName(i), p.LogPath())
		}
	}
	if !w.Webhook.Running() {
		return row, fmt.Errorf("the webhook exited (see %s)", w.Webhook.LogPath())
	}
	a, err := snapWithRetry(ctx, s, w)
	if err != nil {
		return row, err
	}
	stopPeak := world.TrackPeak(ctx, time.Second, w.Runners.LivePods)
	profiled := make(chan error, 1)
	if s.profilingAddr != "" {
		go func() {
			profiled <- saveProfile(ctx, s.profilingAddr, o.measure, filepath.Join(s.dir, fmt.Sprintf("worker-cpu-%g.pprof", rate)))
		}()
	} else {
		profiled <- nil
	}
	if err := sleepCtx(ctx, o.measure); err != nil {
		return row, err
	}
	peak := stopPeak()
	b, err := snapWithRetry(ctx, s, w)
	if err != nil {
		return row, err
	}
	if err := sleepCtx(ctx, o.grace); err != nil {
		return row, err
	}
	if err := <-profiled; err != nil {
		fmt.Printf("no CPU profile of this step: %v\n", err)
	}
	readAt := time.Now()
	row = newScaleRow(rate, a, b, w.GitHub.Jobs(), w.Runners.PodTimes(), w.Sender.Stats().Latencies, readAt)
	row.peakRunners = peak
	return row, nil
}

// snapWithRetry takes a snapshot, trying three times 2 s apart: an
// overloaded process may cut one /metrics answer short (seen at 20 jobs/s).
func snapWithRetry(ctx context.Context, s *session, w *world.World) (scaleSnap, error) {
	var err error
	for range 3 {
		var snap scaleSnap
		if snap, err = takeScaleSnap(ctx, s, w); err == nil {
			return snap, nil
		}
		if err := sleepCtx(ctx, 2*time.Second); err != nil {
			return snap, err
		}
	}
	return scaleSnap{}, err
}

// saveProfile records the worker's CPU profile for d into path.
func saveProfile(ctx context.Context, addr string, d time.Duration, path string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("worker CPU profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("worker CPU profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("worker CPU profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("worker CPU profile: %w", err)
	}
	return f.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// scaleConditions says under what conditions the table was measured.
func scaleConditions(o scaleOptions) string {
	return fmt.Sprintf(`Each step: the rate set, %v of warm-up, a measured window of %v, then %v more at the same rate before the window's jobs are read. Job durations are log-normal (median 2 min, p95 15 min, σ = ln(7.5)/1.645 ≈ 1.22, mean ≈ 4.2 min, capped at 1 h), **divided by %g** (--time-scale) so the machine reaches a steady number of runners within a step; runners register %v after Running. Jobs ask for one of %d label sets with weight 1/(rank+1) (the first gets about 22 %%). Pools: %d (two with an idle buffer of 2, three sharing one label set with priorities 10/5/0 and the first at maxReplicas %d, one RunnerSet at maxReplicas %d), others maxReplicas %d, scale-down delay %v. Worker processes: %d (--workers), sharing the task queue, one of them leading (running the Kubernetes watchers); the worker's CPU, RSS and task waits are summed over them, the work split table gives each. CPU is cores used on average in the window (CPU seconds / wall seconds, from /proc); "machine" is the whole shared machine's busy time, other users included. "queued → pod Running" is per job: the Running time of the pod whose runner took it, 0 when that runner was up before the job (an idle buffer, or a runner created for another job). The worker's task waits are histogram bucket bounds. Actions are counted from the histories by Temporal Cloud's rules, plus heartbeats and queries.

`, o.warmup, o.measure, o.grace, o.timeScale, o.register, len(world.ScaleFleet{Namespaces: o.namespaces, Pools: o.pools}.Targets()), o.pools, world.SpillMaxReplicas, world.RunnerSetMax, o.maxReplicas, o.scaleDownDelay, o.workers)
}
