package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"log/slog"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/workflows"
	"github.com/arcflow/arcflow/workflows/contract"
)

// session is the local stack and a built arcflow, shared by the worlds of a run.
type session struct {
	root     string
	dir      string
	binary   string
	stack    *localstack.Stack
	temporal client.Client
	// temporalServer is localstack.TemporalDev or localstack.TemporalCluster.
	temporalServer string
	// inMemory: a dev server that keeps nothing across a restart.
	inMemory bool
	// profilingAddr is where the first worker serves /debug/pprof/, if it does.
	profilingAddr string
}

// sessionOptions choose the Temporal a session runs.
type sessionOptions struct {
	// ui serves the dev server's Web UI.
	ui bool
	// inMemory keeps the dev server's state in memory rather than in its SQLite
	// file: faster than any real Temporal, so its figures are a best case.
	inMemory bool
	// profiling builds arcflow with -tags profiling, so a worker can serve
	// /debug/pprof/ (--profiling-addr); it costs that process about 6 MiB.
	profiling bool
}

// startSession builds arcflow and starts the stack under dir (wiped first).
func startSession(ctx context.Context, dir string, opts sessionOptions) (*session, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "deploy", "crds")); err != nil {
		return nil, errors.New("run from the arcflow checkout (make demo, make bench or make chaos do)")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := localstack.StopDir(dir); err != nil {
		return nil, fmt.Errorf("stop a stack left in %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &session{root: root, dir: dir, temporalServer: localstack.TemporalServerFromEnv()}
	ui := opts.ui
	step("building arcflow")
	var tags []string
	if opts.profiling {
		tags = append(tags, "profiling")
	}
	if s.binary, err = world.BuildArcflow(ctx, root, dir, tags...); err != nil {
		return nil, err
	}
	temporal := s.temporalServer
	if temporal == localstack.TemporalCluster {
		step("starting etcd, kube-apiserver, kwok, PostgreSQL and a Temporal cluster")
		ui = false // the Web UI comes with the dev server only
	} else {
		s.inMemory = opts.inMemory
		store := "its SQLite file in WAL mode"
		if s.inMemory {
			store = "memory (a best case: no real Temporal keeps its data there)"
		}
		step("starting etcd, kube-apiserver, kwok and the Temporal dev server on " + store)
	}
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	s.stack, err = localstack.Start(startCtx, localstack.Options{
		Dir: filepath.Join(dir, "stack"), Kubernetes: true, Temporal: true, TemporalServer: temporal, TemporalUI: ui,
		TemporalDB:       temporal == localstack.TemporalDev && !s.inMemory,
		SearchAttributes: contract.SearchAttributeTypes(),
	})
	if err != nil {
		return nil, err
	}
	s.temporal, err = client.Dial(client.Options{HostPort: s.stack.TemporalAddress, Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("connect to Temporal: %w", err), s.stack.Stop())
	}
	return s, nil
}

func (s *session) world(ctx context.Context, cfg world.Config) (*world.World, error) {
	cfg.Stack, cfg.RepoRoot, cfg.Binary = s.stack, s.root, s.binary
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(s.dir, cfg.Namespace)
	}
	return world.Start(ctx, cfg)
}

func (s *session) close() {
	if s.temporal != nil {
		s.temporal.Close()
	}
	if s.stack != nil {
		_ = s.stack.Stop()
	}
}

func step(msg string) { fmt.Printf("==> %s\n", msg) }

// waitFor polls cond every 100 ms until it holds, ctx ends or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// waitReconciled waits until the autoscaler has made its first missed-webhook
// reconcile. A new autoscaler makes it at its first decision and asks GitHub
// about every open run, however young, so jobs queued before it ran are found
// there (a GitHub call per run) rather than heard from their deliveries: a
// burst queued between the HRA's acceptance and that decision measured 1.04
// GitHub calls a job instead of 0.01.
func (s *session) waitReconciled(ctx context.Context, namespace, hra string) error {
	id := contract.AutoscalerWorkflowID(namespace, hra)
	return waitFor(ctx, time.Minute, "the autoscaler's first reconcile", func() bool {
		value, err := s.temporal.QueryWorkflow(ctx, id, "", contract.QueryState)
		var state workflows.AutoscalerState
		return err == nil && value.Get(&state) == nil && !state.NextSync.IsZero()
	})
}

// waitAccepted waits until the worker has accepted a HorizontalRunnerAutoscaler
// (its Accepted condition), so its workflow runs before jobs are queued.
func (s *session) waitAccepted(ctx context.Context, namespace, hra string) error {
	return waitFor(ctx, time.Minute, "the autoscaler to start", func() bool {
		out, err := s.stack.JSONPath(ctx, namespace, "hra", hra, `{.status.conditions[?(@.type=="Accepted")].status}`)
		return err == nil && out == "True"
	})
}
