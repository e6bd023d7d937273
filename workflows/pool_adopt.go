package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// adoptARCVersion marks pools that take over the runners ARC left when they
// first start (issue 22): a pool that did not is replayed without the call.
const adoptARCVersion = "adopt-arc-runners"

// arcTemplateHash marks adopted static runners: ARC's pod spec is not the
// pool's, so a rollout replaces them once new runners are registered.
// Ephemeral ones count as current: they leave after one job anyway.
const arcTemplateHash = "arc"

// adoptARCRunners takes over the runners ARC's controllers left for this
// pool, before its first decision, so they count as its capacity from the
// start: the fleet stays within maxReplicas during the handover, and no
// runner is created for a job one of them already runs. Each becomes a
// runner workflow of its own (RunnerInput.Adopted), which lets a busy one
// finish its job, removes an idle one from GitHub before its pod when the
// pool stops it, and removes ARC's finalizers and objects at its end.
func (p *poolRun) adoptARCRunners(ctx workflow.Context) {
	spec := p.state.Spec
	if spec.Kind == v1alpha1.KindRunnerSet && workflow.GetVersion(ctx, adoptARCRunnerSetVersion, workflow.DefaultVersion, 1) >= 1 {
		p.adoptARCRunnerSet(ctx)
		return
	}
	var found []calls.ARCRunner
	in := calls.ARCRunnersInput{Namespace: spec.Namespace, Kind: spec.Kind, Name: spec.Name}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.ARCRunners, in).Get(ctx, &found); err != nil {
		p.adoptionFailed(ctx, "look for runners ARC left", err)
		return
	}
	p.takeOverARCRunners(ctx, found)
}

// adoptionFailed reports a step of the takeover that could not be done, in
// the worker's log and as an event on the resource.
func (p *poolRun) adoptionFailed(ctx workflow.Context, what string, err error) {
	workflow.GetLogger(ctx).Error("cannot "+what, "pool", p.state.Spec.Name, "error", err)
	p.events = append(p.events, "AdoptionFailed: cannot "+what+": "+err.Error())
}

// takeOverARCRunners makes each runner ARC left a runner workflow of the
// pool, counted as its capacity.
func (p *poolRun) takeOverARCRunners(ctx workflow.Context, found []calls.ARCRunner) {
	if n := p.takeOver(ctx, found); len(n) > 0 {
		p.events = append(p.events, fmt.Sprintf("Adopted: took over %d runner(s) ARC left: %s", len(n), strings.Join(n, ", ")))
		workflow.GetLogger(ctx).Info("adopted ARC's runners", "pool", p.state.Spec.Name, "runners", n)
	}
}

// takeOver makes each runner found a runner workflow of the pool, counted as
// its capacity, and returns their names. A static runner of ARC's counts as
// of another template (arcTemplateHash); an own runner keeps its pod's.
func (p *poolRun) takeOver(ctx workflow.Context, found []calls.ARCRunner) []string {
	spec := p.state.Spec
	byName := map[string]calls.ARCRunner{}
	var adopted []PoolRunner
	var names []string
	for _, r := range found {
		hash := spec.TemplateHash
		switch {
		case r.Own && r.TemplateHash != "":
			hash = r.TemplateHash
		case !r.Own && !r.Ephemeral:
			hash = arcTemplateHash
		}
		pr := PoolRunner{Name: r.Name, TemplateHash: hash, Created: workflow.Now(ctx), Registered: r.RunnerID != 0, Adopted: true,
			// An own runner whose pod ended is only cleaned up: no capacity.
			// (ARC's are counted until they end, as pools that took them over did.)
			Finishing: r.Own && r.Pod.Exited()}
		adopted, names, byName[r.Name] = append(adopted, pr), append(names, r.Name), r
	}
	if len(adopted) == 0 {
		return nil
	}
	p.state.Runners = append(p.state.Runners, adopted...)
	p.startRunnersWith(ctx, adopted, false, func(r PoolRunner) RunnerInput {
		in := p.runnerInput(ctx, r.Name, false)
		taken := byName[r.Name]
		in.Adopted, in.Ephemeral = &taken, taken.Ephemeral
		in.Pod.JIT = taken.JIT // ARC registered its runners with a token
		if taken.Own {
			in.Pod.TemplateHash = r.TemplateHash
		}
		return in
	})
	return names
}
