package replaytest

import (
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/arcflow/arcflow/workflows"
)

// Workflows are the workflow functions arcflow's worker registers; the recorder's
// worker and the replayer register the same ones.
var Workflows = []any{workflows.RunnerWorkflow, workflows.PoolWorkflow, workflows.AutoscalerWorkflow, workflows.RerunWorkflow, workflows.ScaleSetWorkflow}

// WorkflowTypes are the Temporal type names of Workflows.
func WorkflowTypes() []string {
	names := make([]string, 0, len(Workflows))
	for _, wf := range Workflows {
		full := runtime.FuncForPC(reflect.ValueOf(wf).Pointer()).Name()
		names = append(names, full[strings.LastIndex(full, ".")+1:])
	}
	return names
}

// ReplayFile replays one history, in the JSON of `temporal workflow show -o json`,
// against the workflow code compiled into this binary. A change that makes the code
// issue other commands than the history recorded fails with the SDK's
// non-determinism error (TMPRL1100).
func ReplayFile(path string) error {
	replayer := worker.NewWorkflowReplayer()
	for _, wf := range Workflows {
		replayer.RegisterWorkflow(wf)
	}
	// The returned error says what diverged; the SDK's own log of it is a stack trace.
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet, path); err != nil {
		return fmt.Errorf("replay %s: %w", path, err)
	}
	return nil
}

// HistoryInfo is what a history file says of itself: its workflow type and whether
// the run ended as a path worth keeping (completed, or continued as new).
type HistoryInfo struct {
	WorkflowType string
	Closed       bool
	Events       int
}

// ReadHistoryInfo reads a history file's workflow type and last event.
func ReadHistoryInfo(path string) (HistoryInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return HistoryInfo{}, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return HistoryInfo{}, fmt.Errorf("parse history %s: %w", path, err)
	}
	events := hist.GetEvents()
	if len(events) == 0 {
		return HistoryInfo{}, fmt.Errorf("history %s has no events", path)
	}
	info := HistoryInfo{Events: len(events)}
	info.WorkflowType = events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
	last := events[len(events)-1]
	info.Closed = last.GetWorkflowExecutionCompletedEventAttributes() != nil ||
		last.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil
	return info, nil
}
