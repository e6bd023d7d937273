package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

var timeZero time.Time

// listen adds the pod and stop signal channels to a selector.
func (r *runnerRun) listen(ctx workflow.Context, sel workflow.Selector) {
	sel.AddReceive(r.podSignals, func(c workflow.ReceiveChannel, _ bool) {
		var pod calls.PodState
		c.Receive(ctx, &pod)
		r.onPod(ctx, pod)
	})
	sel.AddReceive(r.stopSignals, func(c workflow.ReceiveChannel, _ bool) {
		var stop StopRequest
		c.Receive(ctx, &stop)
		r.onStop(ctx, stop)
	})
	sel.AddReceive(r.jobStarts, func(c workflow.ReceiveChannel, _ bool) {
		var started contract.JobStarted
		c.Receive(ctx, &started)
		r.onJobStarted(started)
	})
	sel.AddReceive(r.checks, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		r.onCheck()
	})
}

// onCheck takes the pool's registration-check; only a runner that waits for
// one acts on it (RunnerRevisionPoolWakes).
func (r *runnerRun) onCheck() {
	if r.awaitsPoolCheck() {
		r.state.CheckAsked = true
	}
}

// onJobStarted records that GitHub started a job on the runner. A start
// without an ID (not GitHub's) says nothing: the runner's own check decides.
func (r *runnerRun) onJobStarted(started contract.JobStarted) {
	if started.RunnerID == 0 || (r.state.RunnerID != 0 && r.state.RunnerID != started.RunnerID) {
		return
	}
	r.state.RunnerID, r.state.JobStarted = started.RunnerID, true
}

// onPod records a pod change. Signals are idempotent: a resource version already
// seen, or a pod with another UID (an older pod of the same name), changes nothing.
func (r *runnerRun) onPod(ctx workflow.Context, pod calls.PodState) {
	cur := r.state.Pod
	if pod.UID != "" && cur.UID != "" && pod.UID != cur.UID {
		return
	}
	if pod.ResourceVersion != "" && pod.ResourceVersion == cur.ResourceVersion {
		return
	}
	if pod.UID == "" {
		pod.UID = cur.UID
	}
	if cur.Ready && pod.Ready && !cur.ReadySince.IsZero() {
		pod.ReadySince = cur.ReadySince
	}
	if pod.Ready && pod.ReadySince.IsZero() {
		pod.ReadySince = workflow.Now(ctx)
	}
	switch {
	case !pod.Unschedulable:
		r.state.UnschedulableSince = timeZero
	case r.state.UnschedulableSince.IsZero():
		r.state.UnschedulableSince = workflow.Now(ctx)
	}
	r.state.Pod = pod
}

func (r *runnerRun) onStop(ctx workflow.Context, stop StopRequest) {
	if r.state.StopRequested {
		return
	}
	workflow.GetLogger(ctx).Info("stop requested", "runner", r.in.Pod.Name, "reason", stop.Reason)
	r.state.StopRequested, r.state.StopReason = true, stop.Reason
}

// drainSignals applies every buffered signal before continue-as-new, so none is lost.
func (r *runnerRun) drainSignals(ctx workflow.Context) {
	r.drainPodSignals(ctx)
	var stop StopRequest
	for r.stopSignals.ReceiveAsync(&stop) {
		r.onStop(ctx, stop)
	}
	var started contract.JobStarted
	for r.jobStarts.ReceiveAsync(&started) {
		r.onJobStarted(started)
	}
	for r.checks.ReceiveAsync(nil) {
		r.onCheck()
	}
}

// drainPodSignals applies the pod events that arrived while the workflow did
// not listen (in a call, say), so that the runner's end reads its pod's last
// known state.
func (r *runnerRun) drainPodSignals(ctx workflow.Context) {
	var pod calls.PodState
	for r.podSignals.ReceiveAsync(&pod) {
		r.onPod(ctx, pod)
		pod = calls.PodState{}
	}
}
