package localstack

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// FreePorts reserves n distinct free TCP ports on 127.0.0.1 for servers to listen
// on. The listeners are held until all ports are chosen, so the same port is never
// handed out twice. They are drawn at random below the kernel's ephemeral range
// (32768 and up): there every outgoing connection of every process takes its local
// port, and one took a port between its release here and the server's bind (a dev
// server failed with "address already in use" when two test stacks started at the
// same moment).
func FreePorts(n int) ([]int, error) {
	return reservePorts(n, func() int { return 10000 + rand.IntN(1<<15-10000) })
}

func reservePorts(n int, candidate func() int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	var lastErr error
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("reserve %d free ports: %w", n, lastErr)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(candidate()))
		if err != nil {
			lastErr = err // taken; try another
			continue
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
