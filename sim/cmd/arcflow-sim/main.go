// Command arcflow-sim runs arcflow against the simulated world (fake GitHub,
// simulated runners, signed webhooks) on the local stack:
//
//	arcflow-sim demo    a short workload with a live progress line (make demo)
//	arcflow-sim bench   latency, cost and memory tables per workload size (make bench)
//	arcflow-sim chaos   the workload while the worker and webhook are killed (make chaos)
//	arcflow-sim scale   50 pools under a rising Poisson rate until jobs wait (make scale)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: arcflow-sim <command> [flags]

commands:
  demo    start everything, apply deploy/examples, run a short workload, stay up until Ctrl-C
  bench   benchmark tables per workload size, beside ARC's measured figures
  chaos   the workload while the worker and the webhook are killed with SIGKILL
  scale   50 pools in 5 namespaces under a rising job rate, until jobs wait; a table and a plot

` + "`arcflow-sim <command> --help`" + ` lists a command's flags.`

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "--help" || os.Args[1] == "-h" {
		fmt.Println(usage)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "demo":
		err = runDemo(ctx, os.Args[2:])
	case "bench":
		err = runBench(ctx, os.Args[2:])
	case "chaos":
		err = runChaos(ctx, os.Args[2:])
	case "scale":
		err = runScale(ctx, os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "arcflow-sim: unknown command %q\n\n%s\n", os.Args[1], usage)
		os.Exit(2)
	}
	os.Exit(exitCode(ctx, os.Args[1], err))
}

// exitCode maps a command's result to the process's exit status. Ctrl-C is how a
// person ends the demo, so an interrupted demo exits 0 once everything is stopped;
// an interrupted bench or chaos run has no result and exits 130, as a shell does.
func exitCode(ctx context.Context, command string, err error) int {
	interrupted := ctx.Err() != nil
	switch {
	case interrupted && command == "demo":
		fmt.Println("interrupted: everything the demo started is stopped")
		return 0
	case interrupted:
		fmt.Fprintln(os.Stderr, "arcflow-sim "+command+": interrupted")
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "arcflow-sim "+command+":", err)
		return 1
	}
	return 0
}
