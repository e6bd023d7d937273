package workflows

// The re-run workflow re-runs a job that infrastructure took from its runner
// (a node lost, a pod evicted, preempted or deleted by someone else, a runner
// OOM-killed): GitHub takes a re-run only once the run's attempt completed, so
// the workflow waits for that on a backing-off timer, for as long as it takes,
// across worker restarts, then calls POST .../actions/jobs/{id}/rerun. Its ID
// names the run and the job, so every attempt's loss of that job comes here
// and the limit counts them all.
//
//	job-lost ──▶ WaitingForRun ──run completed──▶ re-run ──▶ Watching ──quiet for Watch──▶ done
//	                 ▲  └─ not yet: timer, doubled up to MaxPoll        │
//	                 └──────────────── job-lost (the re-run lost too) ◀─┘

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// rerunMaxHistory triggers continue-as-new; a re-run workflow rarely gets near.
const rerunMaxHistory = 2000

// RerunWorkflow re-runs one job of a run. Its ID is contract.RerunWorkflowID.
func RerunWorkflow(ctx workflow.Context, in RerunInput) (RerunState, error) {
	r := &rerunRun{in: in, lost: workflow.GetSignalChannel(ctx, contract.SignalJobLost)}
	if in.State != nil {
		r.state = *in.State
	}
	r.defaults()
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (RerunState, error) { return r.state, nil }); err != nil {
		return RerunState{}, err
	}
	for {
		r.hear(ctx)
		if r.state.Pending == nil {
			if !workflow.Now(ctx).Before(r.state.WatchUntil) {
				return r.state, nil
			}
			r.setPhase(ctx, RerunPhaseWatch)
			r.awaitLoss(ctx, r.state.WatchUntil.Sub(workflow.Now(ctx)))
			continue
		}
		lost := *r.state.Pending
		outcome, message := r.handle(ctx, lost)
		r.state.Outcomes = append(r.state.Outcomes, outcome)
		if outcome == calls.RerunDone || outcome == calls.RerunAlready {
			// Already: this workflow's own earlier try whose answer was lost
			// (a worker killed mid-call), or a person's: the job was re-run.
			r.state.Reruns++
		}
		r.report(ctx, lost, outcome, message)
		r.state.Pending, r.state.Polls = nil, 0
		r.state.WatchUntil = workflow.Now(ctx).Add(r.in.Watch)
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > rerunMaxHistory {
			r.hear(ctx)
			next := r.in
			next.State = &r.state
			return RerunState{}, workflow.NewContinueAsNewError(ctx, RerunWorkflow, next)
		}
	}
}

type rerunRun struct {
	in    RerunInput
	state RerunState
	lost  workflow.ReceiveChannel
}

func (r *rerunRun) defaults() {
	if r.in.Watch <= 0 {
		r.in.Watch = DefaultRerunWatch
	}
	if r.in.FirstPoll <= 0 {
		r.in.FirstPoll = DefaultRerunFirstPoll
	}
	if r.in.MaxPoll <= 0 {
		r.in.MaxPoll = DefaultRerunMaxPoll
	}
}

// hear takes every buffered loss. A loss of a job ID already heard is a
// repeat (the pool's signal retried): it changes nothing.
func (r *rerunRun) hear(ctx workflow.Context) {
	var lost JobLost
	for r.lost.ReceiveAsync(&lost) {
		r.take(ctx, lost)
	}
}

func (r *rerunRun) take(ctx workflow.Context, lost JobLost) {
	for _, seen := range r.state.Lost {
		if seen.JobID == lost.JobID {
			return
		}
	}
	workflow.GetLogger(ctx).Info("job lost to infrastructure", "job", lost.JobID, "attempt", lost.RunAttempt, "runner", lost.Runner, "cause", lost.Cause)
	r.state.Lost = append(r.state.Lost, lost)
	if r.state.Pending == nil {
		r.state.Pending = &r.state.Lost[len(r.state.Lost)-1]
		r.publish(ctx, lost.Runner)
	}
}

// awaitLoss waits up to d for a job-lost signal.
func (r *rerunRun) awaitLoss(ctx workflow.Context, d time.Duration) {
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(r.lost, func(c workflow.ReceiveChannel, _ bool) {
		var lost JobLost
		c.Receive(ctx, &lost)
		r.take(ctx, lost)
	})
	sel.AddFuture(workflow.NewTimer(tctx, d), func(workflow.Future) {})
	sel.Select(ctx)
}

// handle re-runs one lost job, waiting as long as GitHub says the run is not
// done, and says what came of it.
func (r *rerunRun) handle(ctx workflow.Context, lost JobLost) (outcome, message string) {
	if lost.Limit <= 0 {
		return calls.RerunLimitReached, "re-runs are off for this pool"
	}
	if r.state.Reruns >= lost.Limit {
		return calls.RerunLimitReached, fmt.Sprintf("re-run %d time(s) already, the pool's limit (%s)", r.state.Reruns, "arcflow.dev/rerun-lost-jobs")
	}
	r.setPhase(ctx, RerunPhaseWaiting)
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		HeartbeatTimeout:    ActivityHeartbeatTimeout,
		// GitHub down or rate limited: keep trying, the job waits either way.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
	})
	for {
		var out calls.RerunLostJobOutput
		in := calls.RerunLostJobInput{Credentials: lost.Credentials, Repository: r.in.Repository, RunID: r.in.RunID,
			JobID: lost.JobID, RunAttempt: lost.RunAttempt}
		if err := workflow.ExecuteActivity(actx, calls.RerunLostJob, in).Get(ctx, &out); err != nil {
			return calls.RerunRefused, "GitHub did not answer: " + err.Error()
		}
		if out.Outcome != calls.RerunWaiting {
			return out.Outcome, out.Message
		}
		r.state.Polls++
		wait := min(r.in.FirstPoll<<min(r.state.Polls-1, 10), r.in.MaxPoll)
		_ = workflow.Sleep(ctx, wait) // losses that come meanwhile wait in the channel
	}
}

// report counts the outcome and tells the pool's resource.
func (r *rerunRun) report(ctx workflow.Context, lost JobLost, outcome, message string) {
	job := fmt.Sprintf("job %q (%d) of run %s#%d attempt %d, lost with runner %s (%s)",
		r.in.JobName, lost.JobID, r.in.Repository, r.in.RunID, lost.RunAttempt, lost.Runner, lost.Cause)
	text := job + ": "
	switch outcome {
	case calls.RerunDone:
		text += fmt.Sprintf("re-run (%d of at most %d)", r.state.Reruns, lost.Limit)
	case calls.RerunAlready:
		text += fmt.Sprintf("re-run (%d of at most %d; the run had its new attempt already: an earlier try of this call, or a person)", r.state.Reruns, lost.Limit)
	case calls.RerunNoPermission:
		text += "not re-run: the GitHub credentials lack actions: write (" + message + ")"
	default:
		text += "not re-run: " + message
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second, HeartbeatTimeout: ActivityHeartbeatTimeout, RetryPolicy: callRetry(),
	})
	err := workflow.ExecuteActivity(actx, calls.ReportLostJob, calls.LostJobReport{Pool: lost.Pool, Cause: lost.Cause, Outcome: outcome, Message: text}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot report a lost job", "job", lost.JobID, "error", err)
	}
	workflow.GetLogger(ctx).Info("lost job handled", "job", lost.JobID, "outcome", outcome)
}

func (r *rerunRun) setPhase(ctx workflow.Context, phase string) {
	if r.state.Phase == phase {
		return
	}
	r.state.Phase = phase
	r.publish(ctx, "")
}

// publish shows the phase, and the runner that lost the job when given, in
// the workflow's search attributes.
func (r *rerunRun) publish(ctx workflow.Context, runner string) {
	updates := []temporal.SearchAttributeUpdate{contract.SearchAttrRunnerState.ValueSet(r.state.Phase)}
	if r.state.Phase == "" {
		updates = updates[:0]
	}
	if runner != "" {
		updates = append(updates, contract.SearchAttrRunnerName.ValueSet(runner))
	}
	if len(updates) == 0 {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Warn("cannot publish the re-run's phase", "error", err)
	}
}
