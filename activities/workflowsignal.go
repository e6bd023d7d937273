package activities

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// SignalWorkflow sends a signal. A runner workflow runs it as a local activity:
// a SignalExternalWorkflow command costs the sender two history events and a
// workflow task for the acknowledgement, a local activity one marker. A workflow
// that is gone is no error: nobody is left to tell. The receiver must take a
// repeat calmly, as a local activity runs again if its workflow task is lost.
func (w *Workflows) SignalWorkflow(ctx context.Context, s WorkflowSignal) error {
	err := w.Client.SignalWorkflow(ctx, s.WorkflowID, "", s.Name, s.Arg)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("signal %s to %s: %w", s.Name, s.WorkflowID, err)
	}
	return nil
}

// SignalWithStartWorkflow sends a signal with start. A retry after a lost
// answer signals again: the receiver must take a repeat calmly.
func (w *Workflows) SignalWithStartWorkflow(ctx context.Context, s WorkflowSignalStart) error {
	var attrs []temporal.SearchAttributeUpdate
	for name, value := range s.Start.Keywords {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(name).ValueSet(value))
	}
	_, err := w.Client.SignalWithStartWorkflow(ctx, s.Start.ID, s.Signal, s.Arg, client.StartWorkflowOptions{
		ID: s.Start.ID, TaskQueue: s.Start.TaskQueue, Memo: s.Start.Memo,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, s.Start.Type, s.Start.Input)
	if err != nil {
		return fmt.Errorf("signal %s with start to %s: %w", s.Signal, s.Start.ID, err)
	}
	return nil
}
