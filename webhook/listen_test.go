package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// A client that sends its headers and then stalls the body holds a connection
// only until the read timeout, and 50 of them do not delay a real delivery.
func TestStalledBodiesAreCutWhileDeliveriesAreAnswered(t *testing.T) {
	const (
		stalled     = 50
		readTimeout = 2 * time.Second
	)
	rec := &recorder{}
	s, err := New(Config{Secret: secret, ReadTimeout: readTimeout, MaxConnections: DefaultMaxConnections}, oneHRA{}, rec, prometheus.NewRegistry(),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	body := fixture(t, "workflow_job.queued.payload.json")
	// Headers and the first 100 bytes of a body that says it has more.
	request := []byte(fmt.Sprintf("POST /webhook HTTP/1.1\r\nHost: arcflow\r\nContent-Type: application/json\r\n"+
		"X-GitHub-Event: workflow_job\r\nX-GitHub-Delivery: stalled\r\nX-Hub-Signature-256: %s\r\nContent-Length: %d\r\n\r\n%s",
		sign(body), len(body), body[:100]))
	l := listen(t, len(request))
	addr := serve(t, s, l)

	conns := make([]net.Conn, stalled)
	opened := make([]time.Time, stalled)
	for i := range conns {
		opened[i] = time.Now() // before the dial: the server may start reading before Dial returns
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.Write(request)
		require.NoError(t, err)
		conns[i] = c
	}
	for range stalled {
		select {
		case <-l.waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not start reading every stalled body")
		}
	}

	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "workflow_job")
	req.Header.Set("X-GitHub-Delivery", "on-time")
	req.Header.Set("X-Hub-Signature-256", sign(body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	answered := time.Now()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Less(t, answered.Sub(start), time.Second, "a delivery is answered while 50 bodies stall")
	t.Logf("signed delivery answered in %v with %d bodies stalled", answered.Sub(start), stalled)

	cut := make([]time.Time, stalled)
	replies := make([][]byte, stalled)
	errs := make(chan error, stalled)
	for i, c := range conns {
		go func() {
			// Bounded, so a server that never cuts fails the test instead of hanging it.
			_ = c.SetReadDeadline(opened[i].Add(readTimeout + 5*time.Second))
			reply, err := io.ReadAll(c) // until the server closes the connection
			replies[i], cut[i] = reply, time.Now()
			errs <- err
		}()
	}
	for range conns {
		require.NoError(t, <-errs, "the server closes a stalled connection")
	}
	fastest, slowest := time.Hour, time.Duration(0)
	for i := range conns {
		held := cut[i].Sub(opened[i])
		fastest, slowest = min(fastest, held), max(slowest, held)
		require.True(t, answered.Before(cut[i]), "the delivery was answered while connection %d stalled", i)
		// The server's deadline starts after the dial began, so held is at least the timeout.
		require.GreaterOrEqual(t, held, readTimeout)
		require.Less(t, held, readTimeout+time.Second, "connection %d cut at the read timeout", i)
		require.True(t, bytes.HasPrefix(replies[i], []byte("HTTP/1.1 400 ")), "%q", replies[i])
	}
	t.Logf("%d stalled connections cut %v to %v after they opened (read timeout %v)", stalled, fastest, slowest, readTimeout)
	require.Len(t, rec.signals, 1)
	require.Equal(t, float64(stalled), testutil.ToFloat64(s.metrics.deliveries.WithLabelValues("workflow_job", "unreadable")))
}

// serve runs s on l until the test ends, and returns the address.
func serve(t *testing.T, s *Server, l net.Listener) string {
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
	})
	return l.Addr().String()
}

// waitListener tells when the server has read a whole stalled request's bytes
// and asks for more: it waits on the stalled body.
type waitListener struct {
	net.Listener
	sent    int
	waiting chan struct{}
}

func listen(t *testing.T, sent int) *waitListener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return &waitListener{Listener: l, sent: sent, waiting: make(chan struct{}, 64)}
}

func (l *waitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &waitConn{Conn: c, l: l}, nil
}

type waitConn struct {
	net.Conn
	l        *waitListener
	read     int
	signaled atomic.Bool
}

func (c *waitConn) Read(p []byte) (int, error) {
	if c.read == c.l.sent && !c.signaled.Swap(true) {
		c.l.waiting <- struct{}{}
	}
	n, err := c.Conn.Read(p)
	c.read += n
	return n, err
}

func TestAnAnswerMustFitInTheWriteTimeout(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err := New(Config{Secret: secret, ReadTimeout: 20 * time.Second}, oneHRA{}, &recorder{}, prometheus.NewRegistry(), log)
	require.ErrorContains(t, err, "--webhook-write-timeout 30s must exceed --webhook-read-timeout 20s plus the signal timeout 10s")
	s, err := New(Config{Secret: secret, ReadTimeout: 20 * time.Second, WriteTimeout: 31 * time.Second}, oneHRA{}, &recorder{}, prometheus.NewRegistry(), log)
	require.NoError(t, err)
	srv := s.httpServer()
	require.Equal(t, []time.Duration{5 * time.Second, 20 * time.Second, 31 * time.Second, 90 * time.Second},
		[]time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout})
	require.Equal(t, 16<<10, srv.MaxHeaderBytes)
}
