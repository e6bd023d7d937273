package workflows

// RunnerSet volume slots. A RunnerSet's volumeClaimTemplates exist to keep
// caches (docker layers, tool caches) warm from one runner to the next, so the
// pool keeps them in slots that outlive their runner: each slot is one claim
// per template, made by the runner's activity and owned by the RunnerSet. A new
// runner takes the lowest free slot of the current templates, or a new one; the
// slot is free again when its runner ends. Which runner holds which slot is
// the pool's durable state, so a crash can neither leak a slot nor hand one to
// two runners, and slots never outnumber the runners that ran at once (at most
// maxReplicas). Slots free for longer than the idle timeout, and slots of
// changed templates, are deleted.

import (
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/arcflow/arcflow/activities/calls"
)

// DefaultVolumeIdleTimeout is how long a free volume slot is kept.
const DefaultVolumeIdleTimeout = time.Hour

// VolumeSlot is one slot of a RunnerSet's volumes.
type VolumeSlot struct {
	Index int
	// Hash identifies the volumeClaimTemplates the slot's claims were made from.
	Hash string
	// Holder is the runner that mounts the slot; empty while free.
	Holder string `json:",omitempty"`
	// FreeSince is when the slot was last freed.
	FreeSince time.Time `json:",omitempty"`
	// Claims name the slot's claims by template when they are not named after
	// the slot: claims ARC made, taken over (pool_adopt_runnerset.go).
	Claims map[string]string `json:",omitempty"`
}

// acquireVolume gives runner the lowest free slot of the current templates, or
// a new one at the lowest index not taken.
func (s *PoolState) acquireVolume(runner string) calls.VolumeSlotRef {
	hash := s.Spec.VolumeHash
	best := -1
	for i, v := range s.Volumes {
		if v.Holder == "" && v.Hash == hash && (best < 0 || v.Index < s.Volumes[best].Index) {
			best = i
		}
	}
	if best < 0 {
		taken := map[int]bool{}
		for _, v := range s.Volumes {
			// A free slot of old templates is on its way out; its claims are
			// named after its hash, so its index may serve the new templates.
			if v.Holder != "" || v.Hash == hash {
				taken[v.Index] = true
			}
		}
		index := 0
		for taken[index] {
			index++
		}
		s.Volumes = append(s.Volumes, VolumeSlot{Index: index, Hash: hash})
		best = len(s.Volumes) - 1
	}
	s.Volumes[best].Holder = runner
	return calls.VolumeSlotRef{Index: s.Volumes[best].Index, Hash: hash, Claims: s.Volumes[best].Claims}
}

// volumeOf is the slot runner holds, if any.
func (s *PoolState) volumeOf(runner string) *calls.VolumeSlotRef {
	for _, v := range s.Volumes {
		if v.Holder == runner {
			return &calls.VolumeSlotRef{Index: v.Index, Hash: v.Hash, Claims: v.Claims}
		}
	}
	return nil
}

// releaseVolume frees the slot runner held.
func (s *PoolState) releaseVolume(runner string, now time.Time) {
	for i := range s.Volumes {
		if s.Volumes[i].Holder == runner {
			s.Volumes[i].Holder, s.Volumes[i].FreeSince = "", now
		}
	}
}

// volumeCounts are the slots held and free, for the status.
func (s *PoolState) volumeCounts() (inUse, free int) {
	for _, v := range s.Volumes {
		if v.Holder != "" {
			inUse++
		} else {
			free++
		}
	}
	return inUse, free
}

// tendVolumes deletes the claims of free slots that are idle past the timeout,
// of changed templates, or of a pool being deleted, and returns when the next
// free slot comes due (zero for none).
func (p *poolRun) tendVolumes(ctx workflow.Context) time.Time {
	s := &p.state
	if len(s.Volumes) == 0 {
		return time.Time{}
	}
	now := workflow.Now(ctx)
	idle := s.Spec.VolumeIdleTimeout
	if idle <= 0 {
		idle = DefaultVolumeIdleTimeout
	}
	var due []calls.VolumeSlotRef
	var next time.Time
	kept := s.Volumes[:0]
	for _, v := range s.Volumes {
		expires := v.FreeSince.Add(idle)
		switch {
		case v.Holder != "":
		case s.Deleting || v.Hash != s.Spec.VolumeHash || !now.Before(expires):
			due = append(due, calls.VolumeSlotRef{Index: v.Index, Hash: v.Hash})
			continue
		case next.IsZero() || expires.Before(next):
			next = expires
		}
		kept = append(kept, v)
	}
	s.Volumes = kept
	if len(due) == 0 {
		return next
	}
	sort.Slice(due, func(i, j int) bool { return due[i].Index < due[j].Index })
	in := calls.DeleteVolumesInput{Namespace: s.Spec.Namespace, Pool: s.Spec.Name, Slots: due}
	if err := workflow.ExecuteActivity(kubeOptions(ctx), calls.DeleteVolumes, in).Get(ctx, nil); err != nil {
		// The RunnerSet owns the claims: deleting it still removes them.
		workflow.GetLogger(ctx).Warn("cannot delete volume claims", "pool", s.Spec.Name, "error", err)
	}
	return next
}
