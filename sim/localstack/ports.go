package localstack

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// FreePorts reserves n distinct free TCP ports on 127.0.0.1 for servers to listen
// on. The listeners are held until all ports are chosen, so the same port is never
// handed out twice in one call. They are drawn at random below the kernel's
// ephemeral range (32768 and up): there every outgoing connection of every process
// takes its local port, and one took a port between its release here and the
// server's bind (a dev server failed with "address already in use" when two test
// stacks started at the same moment).
//
// A port handed out once is never handed out again by this process: a server
// stopped and started again on its ports (a Temporal restart) finds them free,
// where a test running beside it could otherwise draw them while it was down.
func FreePorts(n int) ([]int, error) {
	return handedOut.reserve(n, func() int { return 10000 + rand.IntN(1<<15-10000) })
}

// handedOut is every port this process's FreePorts returned.
var handedOut = &portLedger{given: map[int]bool{}}

type portLedger struct {
	mu    sync.Mutex
	given map[int]bool
}

func (l *portLedger) reserve(n int, candidate func() int) ([]int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range listeners {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	lastErr := fmt.Errorf("every port drawn was handed out before")
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("reserve %d free ports: %w", n, lastErr)
		}
		port := candidate()
		if l.given[port] {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			lastErr = err // taken; try another
			continue
		}
		listeners = append(listeners, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, p := range ports {
		l.given[p] = true
	}
	return ports, nil
}
