//go:build !webhookonly

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// runScale is `arcflow scale`: the force-scale signal, as
// `temporal workflow signal --name force-scale` sends it, with its input checked.
func runScale(args []string) error {
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: arcflow scale -n NAMESPACE HRA --replicas N [--duration 30m]\n\nHolds an autoscaler's desired replicas at N for the duration (the force-scale signal).\n\nflags:")
		fs.PrintDefaults()
	}
	namespace := fs.String("n", envOr("POD_NAMESPACE", "default"), "Kubernetes namespace of the HorizontalRunnerAutoscaler")
	replicas := fs.Int("replicas", -1, "desired replicas to hold (required)")
	duration := fs.Duration("duration", 30*time.Minute, "how long to hold them")
	temporalFlags := addTemporalFlags(fs)
	_ = fs.Parse(reorderFlags(fs, args))
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("name exactly one HorizontalRunnerAutoscaler")
	}
	if *replicas < 0 {
		return errors.New("--replicas is required and must not be negative")
	}
	if *duration <= 0 {
		return fmt.Errorf("--duration must be positive, got %s", *duration)
	}
	tc, err := temporalFlags.dial(newLogger("error", "text"))
	if err != nil {
		return err
	}
	defer tc.Close()
	id := contract.AutoscalerWorkflowID(*namespace, fs.Arg(0))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := workflows.ForceScale{Replicas: *replicas, Duration: duration.String()}
	if err := tc.SignalWorkflow(ctx, id, "", contract.SignalForceScale, in); err != nil {
		return fmt.Errorf("signal %s: %w (is the HorizontalRunnerAutoscaler applied, and the worker running?)", id, err)
	}
	fmt.Fprintf(os.Stdout, "%s: holding %d replicas for %s\n", id, *replicas, *duration)
	return nil
}

// reorderFlags moves positional arguments after the flags, so both
// `scale app --replicas 3` and `scale --replicas 3 app` work. A flag takes the next
// argument as its value unless it is written name=value or is a boolean flag of fs.
func reorderFlags(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(append(flags, positional...), args[i+1:]...)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			if !strings.Contains(a, "=") && !isBoolFlag(fs, strings.TrimLeft(a, "-")) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	return append(flags, positional...)
}

func isBoolFlag(fs *flag.FlagSet, name string) bool {
	if name == "h" || name == "help" {
		return true
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
