//go:build !webhookonly

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

const drainUsage = `usage: arcflow drain (--namespace NS | --all-namespaces) [--timeout 1h] [--hold 87600h]
       arcflow drain --undo (--namespace NS | --all-namespaces)

Hands the runners of a namespace back, e.g. to ARC. arcflow stops creating
runners there, removes its idle runners at once and lets busy ones finish their
jobs: every HorizontalRunnerAutoscaler's autoscaler is held at 0 replicas for
--hold (the force-scale signal, as ` + "`arcflow scale --replicas 0`" + ` sends it), and every
RunnerDeployment or RunnerSet pool that no autoscaler scales gets a scale signal
to 0. Autoscalers and pools that start meanwhile (a new resource, a webhook
delivery) are held too. The webhook keeps answering; the held autoscalers
create nothing for the jobs it reports.

No job is left waiting: ARC has no reconcile for webhooks it did not get, so
drain hands every job still queued back to ARC in ARC's own form. Each
autoscaler's queued jobs (not the ones already running) become entries of its
HRA's spec.capacityReservations, as ARC's webhook server writes them: one
replica each, expiring when arcflow's reservation would, named
arcflow-job-<job id> (a second drain doubles nothing). ARC's controller creates
their runners. While the hold lasts, the held autoscaler hands back each job
queued later itself, drain running or not, and removes the entry of a job that
completes. Start ARC's controller-manager and its webhook server and point
GitHub's webhook at ARC's before the drain (docs/migrating-from-arc.md).

drain then prints, every few seconds while it changes, the runner workflows
and runner pods left, until none is left or --timeout passes. When it reports
done, nothing of arcflow's runs there: no runner pod, no runner workflow, and
arcflow leaves no finalizer on any object; every autoscaler's queued jobs are
handed back. While ARC's controller-manager runs, arcflow's worker starts no
pool or autoscaler (--arc-controller-lease). arcflow's pool and autoscaler
workflows stay, held at 0, and go on handing back what still reaches them. A timeout, or Ctrl-C, leaves the hold in place: run drain
again to keep waiting.

A pool that joins a runner scale set (arcflow.dev/scale-set): its listener
closes the set's session and polls nothing while held, so the set's jobs
wait in GitHub for a listener; --undo opens a session again.

--undo ends the hold: each autoscaler's force-scale ends within a second, and
each pool without an autoscaler that was scaled is scaled back to its
spec.replicas. Such a pool keeps that count: a later change of its
spec.replicas takes effect at the next ` + "`arcflow drain --undo`" + `. It
removes the capacityReservations entries handed back to ARC (ARC would
otherwise scale for those jobs too).

flags:`

// drainOptions are the parsed arguments of `arcflow drain`.
type drainOptions struct {
	namespace     string
	allNamespaces bool
	timeout, hold time.Duration
	undo          bool
	kubeconfig    string
	temporal      *temporalFlags
}

// where names the namespaces drained, for messages.
func (o *drainOptions) where() string {
	if o.allNamespaces {
		return "all namespaces"
	}
	return "namespace " + o.namespace
}

// parseDrainArgs reads and checks the arguments; a bad combination is an
// error that says what to pass instead.
func parseDrainArgs(args []string, output io.Writer) (*drainOptions, error) {
	fs := flag.NewFlagSet("drain", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), drainUsage)
		fs.PrintDefaults()
	}
	o := &drainOptions{}
	fs.StringVar(&o.namespace, "namespace", "", "the Kubernetes namespace to drain")
	fs.StringVar(&o.namespace, "n", "", "short for --namespace")
	fs.BoolVar(&o.allNamespaces, "all-namespaces", false, "drain every namespace")
	fs.DurationVar(&o.timeout, "timeout", time.Hour, "how long to wait for busy runners to finish (0: hold, report once, and return)")
	fs.DurationVar(&o.hold, "hold", 87600*time.Hour, "how long the autoscalers stay held at 0 replicas")
	fs.BoolVar(&o.undo, "undo", false, "end the hold instead")
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path, to count runner pods; empty means in-cluster")
	o.temporal = addTemporalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("drain takes no arguments, got %q; name the namespace with --namespace", fs.Args())
	case o.namespace == "" && !o.allNamespaces:
		return nil, errors.New("name a namespace with --namespace NS, or drain every namespace with --all-namespaces")
	case o.namespace != "" && o.allNamespaces:
		return nil, errors.New("--namespace and --all-namespaces exclude each other")
	case o.timeout < 0:
		return nil, fmt.Errorf("--timeout must not be negative, got %s", o.timeout)
	case o.hold <= 0:
		return nil, fmt.Errorf("--hold must be positive, got %s", o.hold)
	}
	return o, nil
}

// runDrain is `arcflow drain`.
func runDrain(args []string) error {
	o, err := parseDrainArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	tc, err := o.temporal.dial(newLogger("error", "text"))
	if err != nil {
		return err
	}
	defer tc.Close()
	cfg, err := kubeRESTConfig(o.kubeconfig, defaultKubeQPS, defaultKubeBurst)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	ctx, stop := signalContext()
	defer stop()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	d := &drainer{tc: tc, kube: kube, dynamic: dyn, opts: o, out: os.Stdout, held: map[string]bool{}}
	if o.undo {
		return d.undoHold(ctx)
	}
	return d.run(ctx)
}
