package world

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/sim/localstack"
)

// The table tests pin the rule on hand-built events; this test checks that the
// server writes histories the way the rule reads them (a Signal-With-Start's
// Signaled right after Started, one attempt count per activity, markers tagged
// with their workflow task), on the stack's Temporal dev server.

const (
	probeQueue = "actions-probe"
	// probeID looks like an autoscaler of Kubernetes namespace probe-ns.
	probeID = "hra/probe-ns/probe"
)

var probeState = temporal.NewSearchAttributeKeyKeyword("ArcflowRunnerState")

func probeActivity(ctx context.Context) error {
	if activity.GetInfo(ctx).Attempt < 3 {
		return errors.New("fails on its first two attempts")
	}
	return nil
}

func probeChild(workflow.Context) error { return nil }

// probeWorkflow does one of each billable thing arcflow's workflows do.
func probeWorkflow(ctx workflow.Context) error {
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	// One workflow task: a version marker, two side-effect markers and one upsert.
	_ = workflow.GetVersion(ctx, "probe", workflow.DefaultVersion, 1)
	for range 2 {
		var n int
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return 1 }).Get(&n); err != nil {
			return err
		}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, probeState.ValueSet("probing")); err != nil {
		return err
	}
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1},
	})
	if err := workflow.ExecuteActivity(actx, probeActivity).Get(ctx, nil); err != nil {
		return err
	}
	if err := workflow.ExecuteChildWorkflow(ctx, probeChild).Get(ctx, nil); err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, "more").Receive(ctx, nil)
	return nil
}

func TestCountActionsOnServerHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local stack's Temporal dev server; not under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stack, err := localstack.Start(ctx, localstack.Options{Temporal: true, SearchAttributes: map[string]string{"ArcflowRunnerState": "Keyword"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stack.Stop(); err != nil {
			t.Error(err)
		}
	})
	tc, err := client.Dial(client.Options{HostPort: stack.TemporalAddress, Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	w := worker.New(tc, probeQueue, worker.Options{})
	w.RegisterWorkflow(probeWorkflow)
	w.RegisterWorkflow(probeChild)
	w.RegisterActivity(probeActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	run, err := tc.SignalWithStartWorkflow(ctx, probeID, "go", nil, client.StartWorkflowOptions{TaskQueue: probeQueue}, probeWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.SignalWorkflow(ctx, probeID, run.GetRunID(), "more", nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("probe workflow: %v", err)
	}

	parent, err := History(ctx, tc, probeID, run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range parent {
		types = append(types, strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_"))
	}
	t.Logf("parent history: %s", strings.Join(types, " "))
	// Visibility is written after the history: wait until it lists the probe.
	for deadline := time.Now().Add(30 * time.Second); ; {
		refs, err := listRuns(ctx, tc, "WorkflowId = '"+probeID+"'")
		if err != nil {
			t.Fatal(err)
		}
		if len(refs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("visibility does not list %s after 30 s", probeID)
		}
		time.Sleep(100 * time.Millisecond) // polling a store that offers no watch
	}
	// The child's ID does not match the namespace's prefixes: NamespaceActions
	// finds it through the parent's history.
	got, err := NamespaceActions(ctx, tc, "probe-ns", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Parent and child starts, the child's start intent, the one client signal
	// after the Signal-With-Start, the activity and its two retries, one workflow
	// task of markers, the timer, the upsert (the SDK's TemporalChangeVersion
	// upsert, if any, is free).
	want := Actions{WorkflowStarts: 2, ChildStartIntents: 1, Signals: 1, Activities: 1, ActivityRetries: 2, MarkerTasks: 1, Timers: 1, SearchAttrUpserts: 1}
	if got.Runs != 2 || got.From != want || got.Before != (Actions{}) {
		t.Fatalf("%d runs, actions %+v (before the split %+v); want 2 runs, %+v", got.Runs, got.From, got.Before, want)
	}
}
