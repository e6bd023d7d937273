package workflows

// Taking over a RunnerSet from ARC. ARC's RunnerSet controller made one
// StatefulSet per runner, and the StatefulSet one claim per volumeClaimTemplate,
// which ARC leaves behind when the StatefulSet goes. arcflow's pool keeps a
// RunnerSet's volumes in slots that outlive their runner (pool_volumes.go), so
// ARC's claims become slots too, keeping their names, volumes and data: the
// slot names its claims (VolumeSlot.Claims) and AdoptARCClaims relabels them
// as the slot's, which is what DeleteVolumes and the RunnerSet's garbage
// collection go by. Rebinding the volumes to new claims instead would need
// cluster-wide rights over PersistentVolumes, a Retain reclaim policy and a
// window in which a volume belongs to no claim; relabelling needs none.
//
// A runner's claims are its slot while it lives, free when it ends, and then
// mounted by the next runner as any free slot is. Claims whose StatefulSet ARC
// already deleted are free slots at once. Claims that do not match the
// RunnerSet's templates now (another size, class or access mode) are slots of
// another hash, deleted once free, as a slot of changed templates is.

import (
	"fmt"
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// adoptARCRunnerSetVersion marks pools of RunnerSets that take over ARC's
// per-runner StatefulSets and their claims; before it a RunnerSet's pool
// adopted nothing.
const adoptARCRunnerSetVersion = "adopt-arc-runnersets"

// arcVolumeHash is the hash of slots made of ARC's claims that do not match
// the RunnerSet's templates: no runner mounts them, and they are deleted once
// free.
const arcVolumeHash = "arc"

// adoptARCRunnerSet takes over what ARC left of a RunnerSet before the pool's
// first decision: its claims as volume slots, then its runners as adopted
// runner workflows that hold their claims' slots until they end.
func (p *poolRun) adoptARCRunnerSet(ctx workflow.Context) {
	spec := p.state.Spec
	in := calls.ARCRunnerSetInput{Namespace: spec.Namespace, Name: spec.Name}
	if sts := spec.Runner.StatefulSet; sts != nil {
		in.Templates = sts.VolumeClaimTemplates
	}
	var found calls.ARCRunnerSetRunners
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.ARCRunnerSet, in).Get(ctx, &found); err != nil {
		p.adoptionFailed(ctx, "look for runners ARC left", err)
		return
	}
	if slots := p.state.adoptARCVolumes(found, workflow.Now(ctx)); len(slots) > 0 {
		claims := calls.AdoptARCClaimsInput{Namespace: spec.Namespace, Pool: spec.Name, Owner: spec.Runner.Owner, Slots: slots}
		if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.AdoptARCClaims, claims).Get(ctx, nil); err != nil {
			// Unlabelled, the claims are not the pool's to mount or delete:
			// leave them as ARC made them rather than lose track of them.
			p.state.dropVolumes(slots)
			p.adoptionFailed(ctx, "take over the claims ARC left", err)
		} else {
			reusable := 0
			for _, s := range slots {
				if s.Hash != arcVolumeHash {
					reusable++
				}
			}
			p.events = append(p.events, fmt.Sprintf("AdoptedVolumes: took over the claims of %d StatefulSet(s) ARC left as volume slots, %d of them matching the volumeClaimTemplates", len(slots), reusable))
		}
	}
	p.takeOverARCRunners(ctx, found.Runners)
}

// adoptARCVolumes adds a slot for each set of ARC's claims: held by its
// runner while that lives, free otherwise; of the RunnerSet's volume hash
// where the claims match its templates, of arcVolumeHash where not. It
// returns the new slots.
func (s *PoolState) adoptARCVolumes(found calls.ARCRunnerSetRunners, now time.Time) []calls.VolumeSlotRef {
	type held struct {
		claims calls.ARCClaimSet
		holder string
	}
	var sets []held
	for _, r := range found.Runners {
		if r.Claims != nil {
			sets = append(sets, held{*r.Claims, r.Name})
		}
	}
	for _, c := range found.Claims {
		sets = append(sets, held{claims: c})
	}
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].claims.StatefulSet < sets[j].claims.StatefulSet })
	taken := map[int]bool{}
	for _, v := range s.Volumes {
		taken[v.Index] = true
	}
	var refs []calls.VolumeSlotRef
	index := 0
	for _, set := range sets {
		for taken[index] {
			index++
		}
		taken[index] = true
		hash := arcVolumeHash
		if set.claims.Match && s.Spec.VolumeHash != "" {
			hash = s.Spec.VolumeHash
		}
		slot := VolumeSlot{Index: index, Hash: hash, Holder: set.holder, Claims: set.claims.Claims}
		if slot.Holder == "" {
			slot.FreeSince = now
		}
		s.Volumes = append(s.Volumes, slot)
		refs = append(refs, calls.VolumeSlotRef{Index: index, Hash: hash, Claims: set.claims.Claims})
	}
	return refs
}

// dropVolumes forgets slots without deleting their claims.
func (s *PoolState) dropVolumes(slots []calls.VolumeSlotRef) {
	gone := map[int]bool{}
	for _, r := range slots {
		gone[r.Index] = true
	}
	kept := s.Volumes[:0]
	for _, v := range s.Volumes {
		if !gone[v.Index] || v.Claims == nil {
			kept = append(kept, v)
		}
	}
	s.Volumes = kept
}
