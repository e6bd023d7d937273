package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// The webhook listener faces the internet, so no client may hold it open: every
// phase of a connection has a deadline (issue 23).
const (
	// DefaultReadTimeout bounds reading one request, headers and body. GitHub sends
	// a 1 MiB body in well under a second, and gives up on a delivery after 10 s,
	// so a body still arriving after 10 s is one nobody waits for.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds a request from the end of its headers to the end
	// of its answer: the rest of the body (up to the read timeout), then the wait
	// for a durable signal (up to Config.SignalTimeout, 10 s), then the answer.
	// 30 s leaves room for both and is still a bound.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxConnections caps the connections open at once. net/http has no
	// cap, and a client that sends a 1 MiB body but its last byte holds about
	// 1.2 MiB of heap until the read timeout (measured: 1171 KiB a connection, 19
	// KiB with only its headers sent), so without a cap a few hundred such clients
	// would take the webhook past its 256 MiB memory limit. 128 bounds that to
	// about 150 MiB and is above the 100 deliveries at once of a 100-job burst.
	// At the cap a new connection is not refused: it waits in the kernel's accept
	// queue until one closes (a request holds its connection at most the header
	// timeout plus WriteTimeout, an idle one idleTimeout).
	DefaultMaxConnections = 128

	// readHeaderTimeout: GitHub's headers come in one packet; a client that takes
	// longer is slow on purpose.
	readHeaderTimeout = 5 * time.Second
	// idleTimeout outlasts the 60 s idle timeout of the usual proxies in front
	// (nginx ingress upstream keep-alive, AWS ALB), so the proxy closes a kept-alive
	// connection before arcflow does and never sends a delivery on one being closed.
	idleTimeout = 90 * time.Second
	// maxHeaderBytes: GitHub's headers are about 1 KiB, a proxy adds a few hundred
	// bytes; Go's default would let each connection hold 1 MiB of them.
	maxHeaderBytes = 16 << 10
	// shutdownGrace lets deliveries in flight finish when the process stops.
	shutdownGrace = 10 * time.Second
)

// validateListener checks the listener settings of cfg, defaults applied.
func validateListener(cfg Config) error {
	if cfg.ReadTimeout <= 0 || cfg.WriteTimeout <= 0 {
		return fmt.Errorf("webhook: --webhook-read-timeout %v and --webhook-write-timeout %v must be positive", cfg.ReadTimeout, cfg.WriteTimeout)
	}
	// The write deadline starts after the headers, so an answer needs the rest of
	// the body and the signal wait to fit in it; otherwise a durable delivery would
	// look failed to GitHub.
	if cfg.WriteTimeout <= cfg.ReadTimeout+cfg.SignalTimeout {
		return fmt.Errorf("webhook: --webhook-write-timeout %v must exceed --webhook-read-timeout %v plus the signal timeout %v, or a delivery Temporal accepted could not be answered",
			cfg.WriteTimeout, cfg.ReadTimeout, cfg.SignalTimeout)
	}
	return nil
}

// httpServer is the server with every limit of cfg set.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: min(readHeaderTimeout, s.cfg.ReadTimeout),
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// ListenAndServe serves on addr until ctx ends, then shuts down gracefully.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("webhook listener: %w", err)
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx ends, then shuts down gracefully; it closes l.
// Idle kept-alive connections count against the cap too, until idleTimeout.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if s.cfg.MaxConnections > 0 {
		l = netutil.LimitListener(l, s.cfg.MaxConnections)
	}
	srv := s.httpServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("webhook server: %w", err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return fmt.Errorf("webhook server shutdown: %w", err)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("webhook server: %w", err)
		}
		return nil
	}
}
