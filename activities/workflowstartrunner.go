package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/activity"
)

// A runner workflow's first step was to create its pod: a local activity, one
// marker and so one Temporal action per runner. A pool's StartWorkflows
// already runs for every new runner, so it creates the pod just before the
// runner's workflow starts (WorkflowStart.RunnerPod) and hands the workflow
// what the creation returned (RunnerInput.Created): the same call, with no
// action of its own. The pod exists before its workflow does; the pod
// watcher keeps a young pod's signals until its workflow is there
// (worker.PodWatcher).

// createdField is the runner input's field for the creation's output.
const createdField = "Created"

// createRunnerFirst creates the runner of a start that names one and returns
// the workflow's input with the creation's output in it. Any failure leaves
// the input as it was: the runner's workflow then creates its pod itself, as
// it did before, and meets the error where it knows what to do with it (a
// rate limit waits, an invalid template ends the runner). Only an activity's
// first attempt creates: a retry may come after the runner's workflow ended
// and deleted its pod, and would bring the pod back with no workflow to own
// it, so a retry's runners create their pods themselves.
func (w *Workflows) createRunnerFirst(ctx context.Context, s WorkflowStart) json.RawMessage {
	if s.RunnerPod == nil || w.CreateRunner == nil || (activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1) {
		return s.Input
	}
	if w.CanCreateRunners != nil && !w.CanCreateRunners(ctx) {
		return s.Input // a replica still runs an older release (worker.WorkerRevisions)
	}
	out, err := w.CreateRunner(ctx, *s.RunnerPod)
	if err != nil {
		slog.Warn("runner not created before its workflow; the workflow creates it", "runner", s.RunnerPod.Namespace+"/"+s.RunnerPod.Name, "error", err)
		return s.Input
	}
	input, err := withField(s.Input, createdField, out)
	if err != nil {
		slog.Warn("runner created before its workflow, which creates it again", "runner", s.RunnerPod.Namespace+"/"+s.RunnerPod.Name, "error", err)
		return s.Input
	}
	return input
}

// withField sets one top-level field of a JSON object.
func withField(object json.RawMessage, name string, value any) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(object, &fields); err != nil {
		return nil, fmt.Errorf("workflow input is not a JSON object: %w", err)
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	fields[name] = encoded
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode workflow input: %w", err)
	}
	return out, nil
}
