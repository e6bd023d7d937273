package world

import (
	"context"
	"fmt"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/workflows"
)

// ReadyUntoldRunners counts a namespace's runner workflows started with a
// ready-untold pod (RunnerPodInput.ReadyUntold), and of those, the ones that
// were signalled their pod while it ran (a start or readiness the watcher
// should have kept to itself).
func ReadyUntoldRunners(ctx context.Context, tc client.Client, namespace string) (untold, signalledRunning int, err error) {
	dc := converter.GetDefaultDataConverter()
	var decodeErr error
	err = walkRuns(ctx, tc, []string{fmt.Sprintf("WorkflowId STARTS_WITH 'runner/%s/'", namespace)}, 4, func(_ runRef, events []*historypb.HistoryEvent) {
		if len(events) == 0 {
			return
		}
		started := events[0].GetWorkflowExecutionStartedEventAttributes()
		if started == nil || started.GetContinuedExecutionRunId() != "" {
			return
		}
		var in workflows.RunnerInput
		if err := dc.FromPayloads(started.GetInput(), &in); err != nil {
			decodeErr = fmt.Errorf("decode a runner's input: %w", err)
			return
		}
		if !in.Pod.ReadyUntold {
			return
		}
		untold++
		for _, e := range events {
			signal := e.GetWorkflowExecutionSignaledEventAttributes()
			if signal.GetSignalName() != "pod" {
				continue
			}
			var pod activities.PodState
			if err := dc.FromPayloads(signal.GetInput(), &pod); err != nil {
				decodeErr = fmt.Errorf("decode a pod signal: %w", err)
				return
			}
			if pod.Exists && !pod.Deleting && pod.Phase == "Running" && !pod.Unschedulable {
				signalledRunning++
				return
			}
		}
	})
	if err == nil {
		err = decodeErr
	}
	return untold, signalledRunning, err
}
