package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
)

// WorkflowSignal is one signal to send to a running workflow.
type WorkflowSignal struct {
	WorkflowID, Name string
	// Arg is the signal's one argument as JSON, encoded by the caller so this
	// package needs none of the workflow types.
	Arg json.RawMessage
}

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
