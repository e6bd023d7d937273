package main

import (
	"flag"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/arcflow/arcflow/internal/hraspec"
)

// envOr returns the environment variable, or def when it is unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if f, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return f
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// newLogger builds the process logger from ARC's --log-level and --log-format.
func newLogger(level, format string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// autoscalingFlags registers ARC's autoscaling flags, shared by the worker and the
// webhook server (both may start an autoscaler workflow).
func autoscalingFlags(fs *flag.FlagSet) *hraspec.Options {
	o := &hraspec.Options{}
	fs.DurationVar(&o.DefaultScaleDownDelay, "default-scale-down-delay", envDuration("ARCFLOW_DEFAULT_SCALE_DOWN_DELAY", 10*time.Minute), "scale-down delay of HRAs that set none")
	fs.DurationVar(&o.BatchWindow, "batch-window", envDuration("ARCFLOW_BATCH_WINDOW", 0), "window that collects workflow_job events before scaling (ARC: 3s; 0 decides at once and still coalesces deliveries that arrive during a decision)")
	fs.DurationVar(&o.SyncPeriod, "sync-period", envDuration("ARCFLOW_SYNC_PERIOD", time.Minute), "how often pull metrics are computed")
	fs.DurationVar(&o.ReconcilePeriod, "reconcile-period", envDuration("ARCFLOW_RECONCILE_PERIOD", 5*time.Minute), "how often queued jobs are listed to catch missed webhooks (0 disables)")
	return o
}
