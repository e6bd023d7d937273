package replaytest

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

var record = flag.Bool("record", false,
	"add the histories not yet in workflows/testdata/histories (existing files are never overwritten)")

// compactHistory is the event count from which the compact server suggests
// continue-as-new, so pools and autoscalers reach it after a few signals instead
// of thousands.
const compactHistory = 40

// server is a Temporal dev server with a worker of arcflow's workflows on fake
// activities.
type server struct {
	stack   *localstack.Stack
	client  client.Client
	workers []worker.Worker
}

var (
	// plain is a dev server with Temporal's defaults; compact suggests
	// continue-as-new early.
	plain, compact *server
	// fakes is the world every fake activity reads; names are unique per scenario.
	fakes = newWorld()
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the recording tests skip; the unit tests run
	}
	os.Exit(runWithServers(m))
}

func runWithServers(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	if actions, err = startActions(); err != nil {
		fmt.Fprintf(os.Stderr, "replaytest: %v\n", err)
		return 1
	}
	defer actions.stop()
	if plain, err = startServer(ctx, nil); err != nil {
		fmt.Fprintf(os.Stderr, "replaytest: %v\n", err)
		return 1
	}
	defer plain.stop()
	compactConfig := map[string]string{"limit.historyCount.suggestContinueAsNew": strconv.Itoa(compactHistory)}
	if compact, err = startServer(ctx, compactConfig); err != nil {
		fmt.Fprintf(os.Stderr, "replaytest: %v\n", err)
		return 1
	}
	defer compact.stop()
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "plain server logs:\n%s\ncompact server logs:\n%s", plain.stack.LogTails(15), compact.stack.LogTails(15))
	}
	return code
}

func startServer(ctx context.Context, dynamicConfig map[string]string) (*server, error) {
	stack, err := localstack.Start(ctx, localstack.Options{
		Temporal: true, SearchAttributes: contract.SearchAttributeTypes(), TemporalDynamicConfig: dynamicConfig,
	})
	if err != nil {
		return nil, err
	}
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	c, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w (and stop: %v)", stack.TemporalAddress, err, stack.Stop())
	}
	// Not fakes: the scale set activities talk to the fake Actions service
	// over HTTP.
	sets := &activities.ScaleSets{Clients: actions.clients}
	// The runners' queue and the control queue, each with every workflow, as
	// arcflow's worker has them.
	var queues []worker.Worker
	for _, queue := range []string{contract.TaskQueue, contract.ControlTaskQueue} {
		w := worker.New(c, queue, worker.Options{})
		for _, wf := range Workflows {
			w.RegisterWorkflow(wf)
		}
		kube := &fakeKubernetes{w: fakes}
		w.RegisterActivity(kube)
		w.RegisterActivity(&fakeGitHub{w: fakes})
		// Not a fake: it starts the pool's runner workflows on this server,
		// where they run with the fakes above, and creates their pods first
		// as arcflow's worker does.
		w.RegisterActivity(&activities.Workflows{Client: c, GroupSignals: true, // as --group-runner-ends does
			CreateRunner: kube.EnsureRunnerPod})
		w.RegisterActivity(sets)
		queues = append(queues, w)
	}
	polls := worker.New(c, contract.PollTaskQueue, worker.Options{DisableWorkflowWorker: true})
	polls.RegisterActivityWithOptions(sets.PollScaleSet, activity.RegisterOptions{Name: calls.PollScaleSet})
	started := []worker.Worker{}
	for _, w := range append(queues, polls) {
		if err := w.Start(); err != nil {
			for _, s := range started {
				s.Stop()
			}
			c.Close()
			return nil, fmt.Errorf("start worker: %w (and stop: %v)", err, stack.Stop())
		}
		started = append(started, w)
	}
	return &server{stack: stack, client: c, workers: started}, nil
}

func (s *server) stop() {
	for i := len(s.workers) - 1; i >= 0; i-- {
		s.workers[i].Stop()
	}
	s.client.Close()
	if err := s.stack.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "replaytest: stop: %v\n", err)
	}
}

// needServers skips a recording test under -short, where no server runs.
func needServers(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("records on Temporal dev servers of the local stack; not under -short")
	}
}
