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

// serveHTTP serves handler on addr until ctx ends. The listener is opened before it
// returns, so a taken port is a start-up error, not a silent gap; name labels the
// endpoint in errors and logs.
func serveHTTP(ctx context.Context, name, addr string, handler http.Handler, log *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s endpoint: %w", name, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
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
