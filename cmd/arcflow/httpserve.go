package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Limits of the metrics and profiling listeners. They serve GETs inside the
// cluster, but a client that stops halfway must still not hold one open (issue
// 23); the webhook's internet-facing listener has its own (webhook/listen.go).
const (
	// internalReadHeaderTimeout and internalReadTimeout: a GET has no body, so
	// reading a request is its headers, which come in one packet.
	internalReadHeaderTimeout = 5 * time.Second
	internalReadTimeout       = 10 * time.Second
	// internalIdleTimeout outlasts a 60 s scrape interval, so Prometheus keeps
	// its connection between scrapes.
	internalIdleTimeout = 90 * time.Second
	// internalMaxHeaderBytes: a scraper's or curl's headers are well under 1 KiB;
	// Go's default is 1 MiB.
	internalMaxHeaderBytes = 16 << 10

	// metricsWriteTimeout: a scrape is written in milliseconds, and Prometheus's
	// own scrape timeout is 10 s.
	metricsWriteTimeout = 30 * time.Second
	// profilingWriteTimeout bounds a CPU profile or trace, which the handler
	// writes after recording for ?seconds= (30 by default); pprof refuses a
	// longer one with a clear error.
	profilingWriteTimeout = 5 * time.Minute
)

// serveHTTP serves handler on addr until ctx ends. The listener is opened before it
// returns, so a taken port is a start-up error, not a silent gap; name labels the
// endpoint in errors and logs. writeTimeout bounds a request from the end of its
// headers to the end of its answer.
func serveHTTP(ctx context.Context, name, addr string, handler http.Handler, writeTimeout time.Duration, log *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s endpoint: %w", name, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: internalReadHeaderTimeout,
		ReadTimeout:       internalReadTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       internalIdleTimeout,
		MaxHeaderBytes:    internalMaxHeaderBytes,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" endpoint stopped", "error", err)
		}
	}()
	log.Info(name+" endpoint listening", "addr", l.Addr().String())
	return nil
}
