package workflows

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// What a runner pays for each call, and how revisions differ (RunnerRevision*):
// an activity task is three history events plus a workflow task of three more,
// and a matching round trip each way before the next step can run. A local
// activity runs inside the workflow task that needs it and leaves one marker.
// Every call a runner makes is a single short Kubernetes or GitHub request,
// idempotent and well inside a workflow task, so runs of RunnerRevisionLocal make
// them all locally.

func (r *runnerRun) local() bool { return r.in.Revision >= RunnerRevisionLocal }

// call runs one of the runner's Kubernetes or GitHub activities.
func (r *runnerRun) call(ctx workflow.Context, activity, arg any) workflow.Future {
	if r.local() {
		return workflow.ExecuteLocalActivity(localOptions(ctx), activity, arg)
	}
	return workflow.ExecuteActivity(kubeOptions(ctx), activity, arg)
}

// localOptions retry like kubeOptions. A retry that waits longer than the
// workflow task allows is a workflow timer, which the SDK arranges.
func localOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: 5 * time.Minute,
		StartToCloseTimeout:    30 * time.Second,
		RetryPolicy:            callRetry(),
	})
}

// notifyRegistered tells the pool that GitHub lists the runner, so the pool can
// count it as ready without asking GitHub.
func (r *runnerRun) notifyRegistered(ctx workflow.Context) {
	r.signalPool(ctx, contract.SignalRunnerRegistered, RunnerRegistered{Name: r.in.Pod.Name})
}

// notifyPool tells the pool that the runner ended. The pool takes a repeat of
// either signal calmly: a local activity runs again when its task is lost.
func (r *runnerRun) notifyPool(ctx workflow.Context, done RunnerDone) {
	if r.in.Revision >= RunnerRevisionGroupedDone {
		// The worker may group it with other runners' ends (runners-done).
		r.signalPoolGrouped(ctx, contract.SignalRunnerDone, contract.SignalRunnersDone, done)
		return
	}
	r.signalPool(ctx, contract.SignalRunnerDone, done)
}

func (r *runnerRun) signalPool(ctx workflow.Context, name string, arg any) {
	r.signalPoolGrouped(ctx, name, "", arg)
}

// signalPoolGrouped signals the pool; with a groupName, runs of
// RunnerRevisionLocal and later send it through SignalWorkflowGrouped, which
// may group it with other signals under that name.
func (r *runnerRun) signalPoolGrouped(ctx workflow.Context, name, groupName string, arg any) {
	if r.in.PoolWorkflowID == "" {
		return
	}
	var err error
	if r.local() {
		encoded, marshalErr := json.Marshal(arg)
		if marshalErr != nil { // plain data; this cannot fail
			panic(marshalErr)
		}
		if groupName != "" {
			signal := calls.GroupedSignal{WorkflowID: r.in.PoolWorkflowID, Name: name, GroupName: groupName, Arg: encoded}
			err = workflow.ExecuteLocalActivity(localOptions(ctx), calls.SignalWorkflowGrouped, signal).Get(ctx, nil)
		} else {
			signal := calls.WorkflowSignal{WorkflowID: r.in.PoolWorkflowID, Name: name, Arg: encoded}
			err = workflow.ExecuteLocalActivity(localOptions(ctx), calls.SignalWorkflow, signal).Get(ctx, nil)
		}
	} else {
		err = workflow.SignalExternalWorkflow(ctx, r.in.PoolWorkflowID, "", name, arg).Get(ctx, nil)
	}
	if err != nil {
		// Most likely the pool is gone (deleted), and nobody waits for this runner.
		workflow.GetLogger(ctx).Warn("cannot signal the pool", "pool", r.in.PoolWorkflowID, "signal", name, "error", err)
	}
}

// publishPhase upserts the runner-state search attribute if it lags behind the
// phase. Runs of RunnerRevisionLocal call it only where the runner waits, so a
// phase it passes through within one workflow task costs no event.
func (r *runnerRun) publishPhase(ctx workflow.Context) {
	if r.published == r.state.Phase {
		return
	}
	err := workflow.UpsertTypedSearchAttributes(ctx, contract.SearchAttrRunnerState.ValueSet(string(r.state.Phase)))
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot set the runner-state search attribute", "error", err)
	}
	r.published = r.state.Phase
}

// podRef names the runner's pod for deletion.
func (r *runnerRun) podRef() calls.PodRef {
	return calls.PodRef{Namespace: r.in.Pod.Namespace, Name: r.in.Pod.Name, UID: r.state.Pod.UID, Kind: r.in.Pod.Kind,
		JobPods: r.in.Pod.Spec.ContainerMode == "kubernetes", ARC: r.in.Adopted != nil && !r.in.Adopted.Own, PoolToken: r.state.PoolToken, Pool: r.in.Pod.Pool}
}

// podUntold: this runner's pod's start and readiness are not signalled to it
// (RunnerRevisionReadyUntold).
func (r *runnerRun) podUntold() bool {
	return r.in.Revision >= RunnerRevisionReadyUntold && r.in.Pod.ReadyUntold
}

// readPod reads the runner's pod, as a pod signal would have brought it. A pod
// that cannot be read leaves the state as it was: the next wake reads again.
func (r *runnerRun) readPod(ctx workflow.Context) {
	var now calls.PodState
	if err := r.call(ctx, calls.GetRunnerPod, r.podRef()).Get(ctx, &now); err != nil {
		workflow.GetLogger(ctx).Warn("cannot read the runner's pod", "runner", r.in.Pod.Name, "error", err)
		return
	}
	r.onPod(ctx, now)
}

// awaitsPoolCheck: the runner waits to register with no timer of its own,
// for its pool's registration-check (RunnerRevisionPoolWakes). A stop or an
// unschedulable pod needs its own timer at once.
func (r *runnerRun) awaitsPoolCheck() bool {
	if r.in.Revision < RunnerRevisionPoolWakes || !r.in.PoolWakes || !r.podUntold() || r.state.PoolChecked || r.state.StopRequested {
		return false
	}
	_, unschedulable := r.unschedulableDeadline()
	return !unschedulable
}

// endTask ends the current workflow task with a 1 ms timer, so the calls made
// in it are in the history before the next call, which cannot be undone, is
// made: local activities are recorded only when their task completes.
func (r *runnerRun) endTask(ctx workflow.Context) {
	// A runner cancelled by hand skips the wait: its calls go on as before.
	_ = workflow.Sleep(ctx, time.Millisecond)
}
