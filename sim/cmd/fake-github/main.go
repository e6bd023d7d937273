// Command fake-github serves arcflow's stateful fake GitHub REST API as a process of
// its own, for the simulator and for manual runs. Runners register and jobs move
// through the control endpoints under /_fake/.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	maxAge := flag.Duration("list-max-age", 60*time.Second, "Cache-Control max-age of list responses")
	flag.Parse()
	srv, err := fakegithub.New(fakegithub.Options{Addr: *addr, ListMaxAge: *maxAge})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-github:", err)
		os.Exit(1)
	}
	fmt.Printf("fake GitHub serving at %s (GITHUB_URL=%s)\n", srv.URL, srv.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	_ = srv.Close()
}
