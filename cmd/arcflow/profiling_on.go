//go:build profiling

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
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
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("profiling endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("profiling endpoint stopped", "error", err)
		}
	}()
	log.Info("profiling endpoint listening", "addr", l.Addr().String())
	return nil
}
