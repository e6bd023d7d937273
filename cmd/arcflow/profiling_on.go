//go:build profiling

package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/pprof"
)

// serveProfiling serves Go's profiles (/debug/pprof/: heap, goroutine, allocs,
// CPU) on addr until ctx ends; an empty addr serves nothing. It has a listener of
// its own, off by default, rather than a path on the metrics port: a profile shows
// the process's internals and a CPU profile costs CPU, so it is for someone looking
// into memory or CPU on purpose, bound where only they can reach it. It is built
// only with `-tags profiling` (see profiling_off.go for why).
func serveProfiling(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveHTTP(ctx, "profiling", addr, mux, profilingWriteTimeout, log)
}
