// Command arcflow-stack starts and stops the local stack for a person: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok and a Temporal dev
// server with its Web UI, or a Temporal cluster on PostgreSQL with --temporal
// cluster. `make up` and `make down` run it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "up" && os.Args[1] != "down") {
		fmt.Fprintln(os.Stderr, "usage: arcflow-stack up|down [--dir DIR] [--temporal dev|cluster]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".stack", "directory for state, logs, PID files and the kubeconfig")
	temporal := fs.String("temporal", localstack.TemporalServerFromEnv(),
		"Temporal server for up: dev (the CLI's dev server with its Web UI) or cluster (temporal-server on PostgreSQL) [$ARCFLOW_TEMPORAL]")
	_ = fs.Parse(os.Args[2:])

	var err error
	if os.Args[1] == "up" {
		err = up(*dir, *temporal)
	} else {
		err = localstack.StopDir(*dir)
		if err == nil {
			fmt.Println("stack stopped")
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "arcflow-stack:", err)
		os.Exit(1)
	}
}

func up(dir, temporal string) error {
	if entries, _ := os.ReadDir(filepath.Join(dir, "pids")); len(entries) > 0 {
		return fmt.Errorf("a stack already runs from %s: run `make down` first", dir)
	}
	// Start from a clean directory: old etcd data would hold the last run's objects.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := temporal == localstack.TemporalDev
	s, err := localstack.Start(ctx, localstack.Options{
		Dir: dir, Kubernetes: true, Temporal: true, TemporalServer: temporal, TemporalUI: dev, TemporalDB: dev,
		SearchAttributes: contract.SearchAttributeTypes(), Detached: true,
	})
	if err != nil {
		return err
	}
	fmt.Printf("stack is up (logs in %s/logs)\n", s.Dir)
	fmt.Printf("  export KUBECONFIG=%s\n", s.Kubeconfig)
	fmt.Printf("  export TEMPORAL_ADDRESS=%s\n", s.TemporalAddress)
	if s.TemporalUIAddress != "" {
		fmt.Printf("  Temporal Web UI: %s\n", s.TemporalUIAddress)
	} else {
		fmt.Println("  Temporal: a cluster on PostgreSQL (no Web UI; use the temporal CLI in .tools/bin)")
	}
	fmt.Println("stop it with: make down")
	return nil
}
