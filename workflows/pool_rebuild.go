package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// rebuildVersion marks pools that take over, when they first start, the
// runners arcflow made for them that are still in the cluster (issue 35).
// A pool starts with no history when Temporal's store was lost or replaced,
// or when its workflow was terminated: its runners' pods ran on, and with no
// workflow owning them they would stay for good, uncounted, while the pool
// created others beside them.
const rebuildVersion = "rebuild-own-runners"

// adoptOwnRunners makes every runner of the pool found in the cluster a runner
// workflow again, before the pool's first decision, so it counts as capacity
// from the start: the fleet stays within maxReplicas, and no runner is created
// for a job one of them runs. A busy one finishes its job; an idle one stays,
// or leaves GitHub before its pod when the pool stops it (RemoveRunner's 422
// keeps a busy one); an ended one is cleaned up. A runner whose workflow still
// runs (the pool's own was terminated) keeps it: the start finds it running.
func (p *poolRun) adoptOwnRunners(ctx workflow.Context) {
	spec := p.state.Spec
	var found []calls.ARCRunner
	in := calls.ARCRunnersInput{Namespace: spec.Namespace, Kind: spec.Kind, Name: spec.Name}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.OwnRunners, in).Get(ctx, &found); err != nil {
		p.adoptionFailed(ctx, "look for the pool's runners in the cluster", err)
		return
	}
	if len(found) == 0 {
		return
	}
	p.learnRunnerIDs(ctx, found)
	for i := range found {
		found[i].Ephemeral = spec.Ephemeral
	}
	names := p.takeOver(ctx, found)
	p.events = append(p.events, fmt.Sprintf("RunnersTakenOver: took over %d runner(s) that outlived their workflows: %s", len(names), strings.Join(names, ", ")))
	workflow.GetLogger(ctx).Info("took over the pool's runners found in the cluster", "pool", spec.Name, "runners", names)
}

// learnRunnerIDs fills in GitHub's ID of each live runner registered with a
// token, from one read of the scope's runner list: a registered one is then
// Idle (or busy) from the start, not waiting for its registration. When the
// list cannot be read, they wait for their registration as new runners do.
func (p *poolRun) learnRunnerIDs(ctx workflow.Context, found []calls.ARCRunner) {
	var names []string
	for _, r := range found {
		if r.RunnerID == 0 && !r.Pod.Exited() {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	var ids map[string]int64
	in := calls.RunnerBusyInput{Scope: p.state.Spec.Scope, Names: names}
	if err := workflow.ExecuteActivity(githubOptions(ctx), calls.RunnerIDs, in).Get(ctx, &ids); err != nil {
		workflow.GetLogger(ctx).Warn("cannot tell which runners taken over are registered; each looks itself up", "pool", p.state.Spec.Name, "error", err)
		return
	}
	for i := range found {
		if id, ok := ids[found[i].Name]; ok && found[i].RunnerID == 0 {
			found[i].RunnerID = id
		}
	}
}

// takenOverStatusVersion marks pools whose status counts the runners they
// took over (PoolStatus.TakenOver): a pool that took over ARC's runners before
// it would otherwise write a status on replay that its history did not.
const takenOverStatusVersion = "status-taken-over"

// takenOverStatus is how many live runners the pool took over.
func (p *poolRun) takenOverStatus(ctx workflow.Context) int {
	n := 0
	for _, r := range p.state.Runners {
		if r.Adopted && !r.Finishing {
			n++
		}
	}
	if n == 0 && p.state.Status.TakenOver == 0 {
		return 0 // no marker in the histories of pools that never took one over
	}
	if workflow.GetVersion(ctx, takenOverStatusVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return 0
	}
	return n
}
