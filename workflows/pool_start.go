package workflows

import (
	"encoding/json"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/workflows/contract"
)

// runnerStartsVersion marks pools that start a decision's runners in one
// StartWorkflows activity. Before it, each runner was a child workflow: every
// child's start was recorded in the pool's history one locked update after
// another, which made a burst of 100 runners wait up to 17 s on a PostgreSQL
// Temporal before their workflows even began. Runs that started before keep the
// child starts on replay.
const runnerStartsVersion = "runner-starts-activity"

// startsInOneActivity says whether this run starts runners with StartWorkflows.
func (p *poolRun) startsInOneActivity(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, runnerStartsVersion, workflow.DefaultVersion, 1) >= 1
}

// startRunners starts the runner workflows of one decision in one activity and
// records them as starting until it returns.
func (p *poolRun) startRunners(ctx workflow.Context, runners []PoolRunner) {
	createFirst := workflow.GetVersion(ctx, runnersCreatedAtStartVersion, workflow.DefaultVersion, 1) >= 1
	p.startRunnersWith(ctx, runners, createFirst, func(r PoolRunner) RunnerInput {
		in := p.runnerInput(ctx, r.Name, r.RegistrationOnly)
		if r.PoolWakes {
			in.PoolWakes = true // RunnerRevisionPoolWakes and later
		}
		return in
	})
}

// runnersCreatedAtStartVersion marks pools whose StartWorkflows creates each
// new runner's pod before its workflow starts (RunnerRevisionCreatedByStart),
// and deletes the pods of runners whose workflows could not be started.
const runnersCreatedAtStartVersion = "runners-created-at-start"

// startRunnersWith starts runner workflows in one activity, each with its
// input; with createFirst, the activity creates each runner's pod first.
func (p *poolRun) startRunnersWith(ctx workflow.Context, runners []PoolRunner, createFirst bool, inputOf func(PoolRunner) RunnerInput) {
	spec := p.state.Spec
	starts := make([]calls.WorkflowStart, 0, len(runners))
	for _, r := range runners {
		in := inputOf(r)
		input, err := json.Marshal(in)
		if err != nil { // RunnerInput is plain data; this cannot fail
			panic(err)
		}
		start := calls.WorkflowStart{
			ID: contract.RunnerWorkflowID(spec.Namespace, r.Name), Type: "RunnerWorkflow", TaskQueue: contract.TaskQueue, Input: input,
			Memo:     contract.RunnerMemo(spec.Namespace, r.Name, spec.Kind, spec.Name, spec.Scope.String()),
			Keywords: runnerKeywords(spec, r.Name, publishedAtStart(in.Revision)), TaskTimeout: RunnerTaskTimeout,
		}
		if createFirst && in.Adopted == nil && !in.Pod.JIT {
			// As the runner would create it (podUntold: the latest revision).
			// Not a JIT runner's: it registers as its pod turns Ready, which
			// a workflow started after its pod may hear late.
			pod := in.Pod
			start.RunnerPod = &pod
		}
		if in.Adopted != nil {
			start.Memo["adoptedFrom"] = "ARC"
			if in.Adopted.Own {
				start.Memo["adoptedFrom"] = "cluster" // its own pod, after its workflow was lost
				start.ReuseClosed = true
			}
			start.Keywords[contract.SearchAttrRunnerState.GetName()] = string(PhaseAdopted)
		}
		starts = append(starts, start)
	}
	batches := [][]calls.WorkflowStart{starts}
	if len(starts) > 1 && workflow.GetVersion(ctx, startBatchesVersion, workflow.DefaultVersion, 1) >= 1 {
		batches = startBatches(starts, maxStartBatchBytes)
	}
	i := 0
	for _, batch := range batches {
		started := workflow.ExecuteActivity(kubeOptions(ctx), calls.StartWorkflows, batch)
		for _, start := range batch {
			p.starting = append(p.starting, pendingStart{name: runners[i].Name, started: started, createdFirst: start.RunnerPod != nil})
			i++
		}
	}
}

// startBatchesVersion marks pools that split a decision's starts into
// activities of at most maxStartBatchBytes of input. One activity for all of
// them took 1.2 MB of input for 800 runners (Temporal refuses a payload over
// 2 MB, which would fail the pool's workflow task at about 1,400 runners of a
// small template) and outlasted its 30 s timeout on a busy server, so its
// retries started the same runners again.
const startBatchesVersion = "start-batches"

// maxStartBatchBytes keeps each StartWorkflows input well under Temporal's
// 512 KB payload warning.
const maxStartBatchBytes = 256 << 10

// startBatches splits starts, in order, into batches whose inputs add up to
// at most limit bytes each (a start larger than limit is a batch of its own).
func startBatches(starts []calls.WorkflowStart, limit int) [][]calls.WorkflowStart {
	var batches [][]calls.WorkflowStart
	var batch []calls.WorkflowStart
	size := 0
	for _, s := range starts {
		n := s.Size()
		if len(batch) > 0 && size+n > limit {
			batches = append(batches, batch)
			batch, size = nil, 0
		}
		batch, size = append(batch, s), size+n
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	return batches
}

// stopAfterStartVersion marks pools that stop a runner only once its start is
// confirmed. A stop sent before its workflow existed failed (not found) and
// was taken for a runner that had already ended, while the runner started
// a moment later, registered, and stayed idle for good, counted as stopping
// (91 runners after a burst of 1,000, whose later starts waited seconds for
// a busy server).
const stopAfterStartVersion = "stop-after-start"

// isStarting says whether the runner's start is not confirmed yet.
func (p *poolRun) isStarting(name string) bool {
	for _, s := range p.starting {
		if s.name == name {
			return true
		}
	}
	return false
}

// runnerInput is what a new runner of the pool starts with.
func (p *poolRun) runnerInput(ctx workflow.Context, name string, registrationOnly bool) RunnerInput {
	spec := p.state.Spec
	pod := spec.Runner
	pod.Name, pod.Namespace, pod.Pool, pod.Kind, pod.TemplateHash = name, spec.Namespace, spec.Name, spec.Kind, spec.TemplateHash
	pod.VolumeSlot = p.state.volumeOf(name)
	if spec.ScaleSet != nil {
		pod.JIT, pod.ScaleSetID = true, p.state.ScaleSetID
	}
	startsTold := p.startsTold(registrationOnly)
	// A JIT runner counts as registered once its pod is Ready, so it hears it.
	pod.ReadyUntold = startsTold && !pod.JIT
	return RunnerInput{
		Pod: pod, Scope: spec.Scope, Ephemeral: spec.Ephemeral, Timings: spec.RunnerTimings,
		PoolWorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, RegistrationOnly: registrationOnly,
		Revision: RunnerRevisionLatest, PatientRegistration: p.patientRegistration(registrationOnly),
		StartsTold: startsTold,
	}
}

// runnerKeywords are a runner workflow's search attributes at start, showing
// the phase the runner's revision publishes first.
func runnerKeywords(spec PoolSpec, name string, phase RunnerPhase) map[string]string {
	return map[string]string{
		contract.SearchAttrKind.GetName(): "runner", contract.SearchAttrPool.GetName(): spec.Namespace + "/" + spec.Name,
		contract.SearchAttrScope.GetName(): spec.Scope.String(), contract.SearchAttrRunnerName.GetName(): name,
		contract.SearchAttrRunnerState.GetName(): string(phase),
	}
}

// startRunnerChild is the start before runnerStartsVersion: a child workflow,
// abandoned when the pool's run closes so it outlives a continue-as-new.
func (p *poolRun) startRunnerChild(ctx workflow.Context, r PoolRunner) {
	spec := p.state.Spec
	in := p.runnerInput(ctx, r.Name, r.RegistrationOnly)
	in.Revision = RunnerRevisionLocal // the revision this path started runners on
	in.Pod.ReadyUntold = false
	var attrs []temporal.SearchAttributeUpdate
	for key, value := range runnerKeywords(spec, r.Name, publishedAtStart(in.Revision)) {
		attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(key).ValueSet(value))
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            contract.RunnerWorkflowID(spec.Namespace, r.Name),
		TaskQueue:             contract.TaskQueue,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		Memo:                  contract.RunnerMemo(spec.Namespace, r.Name, spec.Kind, spec.Name, spec.Scope.String()),
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
	})
	started := workflow.ExecuteChildWorkflow(cctx, RunnerWorkflow, in).GetChildWorkflowExecution()
	p.starting = append(p.starting, pendingStart{name: r.Name, started: started})
}

// deleteUnstartedRunner deletes what the start of a runner whose workflow
// never started may have created (runnersCreatedAtStartVersion): with no
// workflow to own it, its pod would register and could take a job nobody
// watches. Nothing there is no error; a GitHub registration (a JIT runner's)
// lapses unused.
func (p *poolRun) deleteUnstartedRunner(ctx workflow.Context, name string) {
	s := &p.state
	ref := calls.PodRef{Namespace: s.Spec.Namespace, Name: name, Kind: s.Spec.Kind, Pool: s.Spec.Name}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.DeleteRunnerPod, ref).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("cannot delete the pod of a runner whose workflow did not start", "runner", name, "error", err)
	}
}

type pendingStart struct {
	name    string
	started workflow.Future
	// createdFirst: the start may have created the runner's pod
	// (runnersCreatedAtStartVersion).
	createdFirst bool
}

// onStarted drops a runner whose workflow could not be started, and its pod
// if its start created one.
func (p *poolRun) onStarted(ctx workflow.Context, s pendingStart) {
	if err := s.started.Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Error("runner workflow did not start", "runner", s.name, "error", err)
		if s.createdFirst {
			p.deleteUnstartedRunner(ctx, s.name)
		}
		p.onDone(ctx, RunnerDone{Name: s.name, Reason: EndCreateFailed})
	}
	kept := p.starting[:0]
	for _, other := range p.starting {
		if other.name != s.name {
			kept = append(kept, other)
		}
	}
	p.starting = kept
}
