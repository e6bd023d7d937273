package localstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options chooses what a Stack runs.
type Options struct {
	// Dir holds state, logs, PID files and the kubeconfig. Empty means a new
	// temporary directory, removed by Stop.
	Dir string
	// Kubernetes starts etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok with its fake node.
	Kubernetes bool
	// Temporal starts a Temporal server, of the kind TemporalServer names.
	Temporal bool
	// TemporalServer is TemporalDev (the default when empty) or TemporalCluster.
	TemporalServer string
	// TemporalUI serves the Temporal Web UI (for people; tests run headless). Dev
	// server only.
	TemporalUI bool
	// TemporalDB keeps the dev server's state in a SQLite file under Dir instead of
	// memory. A cluster always keeps it in PostgreSQL under Dir.
	TemporalDB bool
	// SearchAttributes registers custom search attributes: name to type (Keyword, Int, ...).
	SearchAttributes map[string]string
	// TemporalDynamicConfig sets dev-server dynamic config: key to JSON value, e.g.
	// "limit.historyCount.suggestContinueAsNew": "40" to reach continue-as-new early.
	TemporalDynamicConfig map[string]string
	// Detached lets the processes outlive this one; `make up` uses it and `make down`
	// stops them with StopDir.
	Detached bool
}

// Stack is a running set of processes.
type Stack struct {
	Dir               string
	Kubeconfig        string
	RESTConfig        *rest.Config
	TemporalAddress   string
	TemporalUIAddress string
	// TemporalMetricsURL is the Temporal server's Prometheus /metrics
	// (persistence and service latencies), for the bench to read.
	TemporalMetricsURL string

	// procsMu guards procs: RestartTemporal replaces one while others read them.
	procsMu  sync.Mutex
	procs    []*process
	detached bool
	ownsDir  bool
	// temporalMu serializes RestartTemporal and LoseTemporalStore: one kill of
	// the server at a time, each held until the server serves again.
	temporalMu sync.Mutex
	// temporalStore is the dev server's SQLite file; empty for one in memory
	// or for the cluster.
	temporalStore string
	// temporalCluster: temporal-server on PostgreSQL rather than the dev server.
	temporalCluster bool
	// searchAttributes are Options.SearchAttributes, which AddTemporalNamespace
	// registers in each namespace it adds.
	searchAttributes map[string]string
	// crdsMu guards crdsInstalled: tests running side by side install the same
	// CRDs once, not in racing applies.
	crdsMu        sync.Mutex
	crdsInstalled map[string]bool
	// reader serves JSONPath; made at its first use.
	readerOnce sync.Once
	reader     *objectReader
	readerErr  error
}

// Start brings up what opts asks for. On error, whatever was started is stopped.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	tools, err := ToolsDir()
	if err != nil {
		return nil, err
	}
	s := &Stack{Dir: opts.Dir, detached: opts.Detached, searchAttributes: opts.SearchAttributes}
	if s.Dir == "" {
		if s.Dir, err = MakeScratchDir(scratchDir(), "arcflow-stack-"); err != nil {
			return nil, fmt.Errorf("stack dir: %w", err)
		}
		s.ownsDir = true
	} else if s.Dir, err = filepath.Abs(s.Dir); err != nil {
		return nil, fmt.Errorf("stack dir: %w", err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("stack dir: %w", err)
	}
	if opts.Kubernetes {
		err = s.startKubernetes(ctx, tools)
	}
	if err == nil && opts.Temporal {
		switch opts.TemporalServer {
		case "", TemporalDev:
			err = s.startTemporal(ctx, tools, opts)
		case TemporalCluster:
			s.temporalCluster = true
			err = s.startTemporalCluster(ctx, tools, opts)
		default:
			err = fmt.Errorf("unknown Temporal server %q: want %q or %q", opts.TemporalServer, TemporalDev, TemporalCluster)
		}
	}
	if err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "env"), []byte(strings.Join(s.Env(), "\n")+"\n"), 0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("write env file: %w", err), s.Stop())
	}
	return s, nil
}

func (s *Stack) start(name, path string, args ...string) error {
	return s.startAs(nil, s.Dir, name, path, args...)
}

// startAs starts a process under another user's credentials (nil: this
// process's), in workDir, which that user must be able to enter.
func (s *Stack) startAs(cred *syscall.Credential, workDir, name, path string, args ...string) error {
	s.procsMu.Lock()
	defer s.procsMu.Unlock()
	p, err := startProcess(s.Dir, workDir, len(s.procs), name, s.detached, cred, path, args...)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	return nil
}

// processes is a snapshot of the stack's processes.
func (s *Stack) processes() []*process {
	s.procsMu.Lock()
	defer s.procsMu.Unlock()
	return append([]*process(nil), s.procs...)
}

// anyExited reports a process of the stack that has already died.
func (s *Stack) anyExited() error {
	for _, p := range s.processes() {
		if err := p.exitedEarly(); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every process in reverse start order, removes a PostgreSQL home
// kept outside the stack directory and, for a temporary stack, the directory.
func (s *Stack) Stop() error {
	var errs []error
	procs := s.processes()
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if err := stopPID(p.cmd.Process.Pid, 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", p.name, err))
		}
		<-p.exited
	}
	s.procsMu.Lock()
	s.procs = nil
	s.procsMu.Unlock()
	if err := os.RemoveAll(filepath.Join(s.Dir, "pids")); err != nil {
		errs = append(errs, err)
	}
	if err := removePostgresHome(s.Dir); err != nil {
		errs = append(errs, err)
	}
	if s.ownsDir {
		if err := os.RemoveAll(s.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Env is the environment a client of the stack needs: KUBECONFIG and TEMPORAL_ADDRESS.
func (s *Stack) Env() []string {
	var env []string
	if s.Kubeconfig != "" {
		env = append(env, "KUBECONFIG="+s.Kubeconfig)
	}
	if s.TemporalAddress != "" {
		env = append(env, "TEMPORAL_ADDRESS="+s.TemporalAddress)
	}
	if s.TemporalUIAddress != "" {
		env = append(env, "TEMPORAL_UI="+s.TemporalUIAddress)
	}
	return env
}

// Kube returns a clientset for the stack's API server.
func (s *Stack) Kube() (kubernetes.Interface, error) {
	if s.RESTConfig == nil {
		return nil, errors.New("the stack runs no Kubernetes")
	}
	return kubernetes.NewForConfig(s.RESTConfig)
}

// LogTails returns the last lines of every process log, for a failed test.
func (s *Stack) LogTails(lines int) string {
	var b strings.Builder
	for _, p := range s.processes() {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", p.name, p.logPath, tail(p.logPath, lines))
	}
	return b.String()
}
